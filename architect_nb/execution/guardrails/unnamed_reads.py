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

import fnmatch
import glob
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from architect_nb.tools.commands.shell_parse import SimpleCommand, Word, parse_script
from architect_nb.tools.commands.wrappers import unwrap

__all__ = ["SensitiveFiles", "unnamed_read"]

#: Programs that show names, sizes or counts, never contents: a glob that reaches a sensitive file is fine.
NAMES_ONLY = frozenset(
    {"ls", "echo", "printf", "stat", "du", "test", "[", "dirname", "basename", "realpath", "readlink", "wc"}
)
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep"})
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


@dataclass(slots=True)
class _Walk:
    """What a recursive reader or lister reaches: roots, and the rules that leave files out."""

    roots: list[str]
    hidden: bool = True  # reads hidden files and folders (`.env`, `.secrets/`)
    recursive: bool = True
    names: list[str] | None = None  # find -name / -path patterns: only matching files (None: all)
    includes: list[str] | None = None  # only files matching one of these (grep --include, rg -g GLOB)
    # What leaves a file out, judged exactly as the program does (a wrong "excluded" would let a read pass):
    skip_names: list[str] = field(default_factory=list)  # on the file's name (grep --exclude, find ! -name)
    skip_folders: list[str] = field(default_factory=list)  # on a folder's name on the way (--exclude-dir)
    skip_parts: list[str] = field(default_factory=list)  # on the file's or a folder's name (rg -g '!x')
    skip_paths: list[str] = field(default_factory=list)  # on the path from the root (find ! -path)

    def reaches(self, sensitive: SensitiveFiles) -> str | None:
        for root in self.roots:
            for path in sensitive.under(root):
                rel = os.path.relpath(path, root) if path != root else os.path.basename(path)
                if self._keeps(rel):
                    return path
        return None

    def _keeps(self, rel: str) -> bool:
        parts = rel.split("/")
        name, folders = parts[-1], parts[:-1]
        if not self.hidden and any(p.startswith(".") and p not in (".", "..") for p in parts):
            return False
        if not self.recursive and folders:
            return False
        if (
            any(fnmatch.fnmatchcase(name, g) for g in self.skip_names)
            or any(fnmatch.fnmatchcase(f, g) for g in self.skip_folders for f in folders)
            or any(fnmatch.fnmatchcase(p, g) for g in self.skip_parts for p in parts)
            or any(fnmatch.fnmatchcase(rel, g.removeprefix("./")) for g in self.skip_paths)
        ):
            return False
        if self.includes is not None and not any(_glob_hits(g, name, rel) for g in self.includes):
            return False
        return self.names is None or any(_glob_hits(g, name, rel) for g in self.names)


def _glob_hits(pattern: str, name: str, rel: str) -> bool:
    """Over-matching, ignoring case: for patterns that choose what is read."""
    pattern = pattern.lower().removeprefix("./")
    return fnmatch.fnmatch(name.lower(), pattern) or fnmatch.fnmatch(rel.lower(), pattern.lstrip("/"))


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
    walk = _reader(program, args, cwd)
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


def _roots(walk: _Walk, cwd: str) -> str:
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
    walk = _lister(program, [w.value for w in words[1:] if w.value is not None], cwd)
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


# ------------------------------------------------------------------ programs that read a tree


@dataclass(slots=True)
class _Options:
    flags: set[str] = field(default_factory=set)  # "-r", "--hidden", ...
    values: list[tuple[str, str]] = field(default_factory=list)  # ("--exclude", "*.log"), ...
    operands: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def of(self, *names: str) -> list[str]:
        return [v for n, v in self.values if n in names]


def _options(args: Sequence[str], short_values: str, long_values: frozenset[str]) -> _Options:
    """Options anywhere before `--` (GNU style), short clusters (`-rn`, `-C2`), `--name=value`."""
    out = _Options()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out.operands += args[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if eq:
                out.values.append((name, value))
            elif name in long_values and i < len(args):
                out.values.append((name, args[i]))
                i += 1
            else:
                out.flags.add(name)
        elif arg.startswith("-") and len(arg) > 1:
            for at, letter in enumerate(arg[1:], start=1):
                if letter in short_values:
                    value = arg[at + 1 :]
                    if not value and i < len(args):
                        value, i = args[i], i + 1
                    out.values.append((f"-{letter}", value))
                    break
                out.flags.add(f"-{letter}")
        else:
            out.operands.append(arg)
    return out


def _paths(operands: Sequence[str], cwd: str, default: str | None = ".") -> list[str]:
    names = list(operands) or ([default] if default else [])
    return [os.path.realpath(os.path.join(cwd, n)) for n in names if os.path.exists(os.path.join(cwd, n))]


_RG_SHORT = "efgtTmABCjMdErs"
_GREP_LONG = frozenset({"--regexp", "--file", "--max-count", "--after-context", "--before-context"})
_RG_LONG = frozenset(
    {"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context",
     "--after-context", "--before-context", "--threads", "--max-depth", "--encoding", "--replace", "--sort",
     "--sortr", "--max-columns", "--max-filesize", "--pre", "--pre-glob", "--ignore-file", "--type-add",
     "--engine", "--color", "--colors", "--path-separator", "--context-separator", "--field-match-separator"}
)  # fmt: skip


def _reader(program: str, args: Sequence[str], cwd: str) -> _Walk | None:
    """The tree a program reads the contents of, if it reads one."""
    if program in _GREPS:
        opts = _options(args, "efmABCdD", _GREP_LONG | {"--directories", "--devices", "--label"})
        recursive = opts.has("-r", "-R", "--recursive", "--dereference-recursive") or "recurse" in opts.of(
            "-d", "--directories"
        )
        if not recursive or opts.has(
            "-l", "-L", "-c", "--files-with-matches", "--files-without-match", "--count"
        ):
            return None
        return _grep_walk(opts, cwd)
    if program in ("rg", "ag", "ack"):
        opts = _options(args, _RG_SHORT if program == "rg" else "Gg", _RG_LONG)
        if opts.has("--files", "-l", "--files-with-matches", "--files-without-match", "-c", "--count"):
            return None
        return _rg_walk(opts, args, cwd)
    if program == "git" and args[:1] == ["grep"] and ({"--no-index", "--untracked"} & set(args)):
        opts = _options(args[1:], "efABCm", _GREP_LONG)
        return _grep_walk(opts, cwd)
    if program == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        readers = _find_exec_programs(args)
        return _find_walk(args, cwd) if any(p not in NAMES_ONLY for p in readers) else None
    return _copier(program, args, cwd)


def _lister(program: str, args: Sequence[str], cwd: str) -> _Walk | None:
    """The tree whose file names a program prints (to feed `xargs` or `$(...)`)."""
    if program == "find" and not any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        return _find_walk(args, cwd)
    if program in ("fd", "fdfind"):
        opts = _options(args, "etdEx", frozenset({"--extension", "--type", "--max-depth", "--exclude"}))
        walk = _Walk(
            _paths(opts.operands[1:], cwd), hidden=opts.has("-H", "--hidden", "-u", "--unrestricted")
        )
        walk.skip_parts = opts.of("-E", "--exclude")
        return walk
    if program == "rg":
        opts = _options(args, _RG_SHORT, _RG_LONG)
        return _rg_walk(opts, args, cwd) if opts.has("--files", "-l", "--files-with-matches") else None
    if program in _GREPS:
        opts = _options(args, "efmABCdD", _GREP_LONG)
        if opts.has("-l", "--files-with-matches") and opts.has("-r", "-R", "--recursive"):
            return _grep_walk(opts, cwd)
    if program == "ls":
        opts = _options(args, "IwT", frozenset({"--ignore", "--hide", "--width"}))
        return _Walk(
            _paths(opts.operands, cwd),
            hidden=opts.has("-a", "-A", "--all", "--almost-all"),
            recursive=opts.has("-R", "--recursive"),
        )
    return None


def _grep_walk(opts: _Options, cwd: str) -> _Walk:
    given_pattern = bool(opts.of("-e", "-f", "--regexp", "--file"))
    operands = opts.operands if given_pattern else opts.operands[1:]
    walk = _Walk(_paths(operands, cwd))
    walk.skip_names = opts.of("--exclude")
    walk.skip_folders = opts.of("--exclude-dir")
    includes = opts.of("--include")
    walk.includes = includes or None
    return walk


def _rg_walk(opts: _Options, args: Sequence[str], cwd: str) -> _Walk:
    """ripgrep (and ag, ack) skip hidden files unless told not to (`--hidden`, `-.`, `-uu`). Ignore files
    are not modelled: a sensitive file that is also git-ignored is judged as if rg read it."""
    given_pattern = bool(opts.of("-e", "-f", "--regexp", "--file")) or opts.has("--files")
    operands = opts.operands if given_pattern else opts.operands[1:]
    unrestricted = sum(len(a) - 1 if a.startswith("-u") else 1 for a in args if _UNRESTRICTED.fullmatch(a))
    hidden = opts.has("--hidden", "-.") or unrestricted > 1
    walk = _Walk(_paths(operands, cwd), hidden=hidden)
    globs = opts.of("-g", "--glob", "--iglob")
    skips = [g[1:] for g in globs if g.startswith("!")]
    walk.skip_parts = [g for g in skips if "/" not in g.strip("/")]  # gitignore style: any level
    walk.skip_paths = [g.lstrip("/") for g in skips if "/" in g.strip("/")]
    positive = [g for g in globs if not g.startswith("!")]
    walk.includes = positive or None
    return walk


def _find_walk(args: Sequence[str], cwd: str) -> _Walk:
    first = next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!", ")"))), len(args))
    walk = _Walk(_paths(args[:first], cwd))
    names: list[str] = []
    for i, arg in enumerate(args[:-1]):
        if arg not in ("-name", "-iname", "-path", "-ipath", "-wholename"):
            continue
        negated = i > 0 and args[i - 1] in ("!", "-not")
        if not negated:
            names.append(args[i + 1])
        elif arg == "-name":  # -iname and -ipath ignore case: not modelled, so not trusted to exclude
            walk.skip_names.append(args[i + 1])
        elif arg in ("-path", "-wholename") and args[: min(first, 1)] in ([], ["."]):
            walk.skip_paths.append(args[i + 1])  # find's path starts with the root as given: "./x"
    walk.names = names or None
    return walk


def _find_exec_programs(args: Sequence[str]) -> list[str]:
    return [
        os.path.basename(args[i + 1])
        for i, a in enumerate(args[:-1])
        if a in ("-exec", "-execdir", "-ok", "-okdir")
    ]


def _copier(program: str, args: Sequence[str], cwd: str) -> _Walk | None:
    """Archives and recursive copies: their copy is a file with another name, read without naming this one."""
    if program == "tar":
        first = args[0] if args else ""
        cluster = first.lstrip("-") if first and not first.startswith("--") else ""
        opts = _options(args, "fCTXb", frozenset({"--file", "--directory", "--files-from", "--exclude-from"}))
        creates = "c" in cluster or opts.has("-c", "--create", "-r", "--append", "-u", "--update")
        if not creates:
            return None
        operands = opts.operands
        if cluster and not first.startswith("-"):  # old style `tar czf out.tgz dir`
            operands = operands[1 + ("f" in cluster) :]
        base = os.path.join(cwd, opts.of("-C", "--directory")[-1]) if opts.of("-C", "--directory") else cwd
        walk = _Walk(_paths(operands, base, default=None))
        walk.skip_parts = opts.of("--exclude")
        return walk
    if program == "zip":
        opts = _options(args, "xibn", frozenset({"--exclude", "--include"}))
        if not opts.has("-r", "-R", "--recurse-paths"):
            return None
        walk = _Walk(_paths(opts.operands[1:], cwd, default=None))
        walk.skip_paths = opts.of("-x", "--exclude")
        return walk
    if program in ("7z", "7za", "7zr") and args[:1] == ["a"]:
        return _Walk(_paths(_options(args[1:], "", frozenset()).operands[1:], cwd, default=None))
    if program in ("cp", "rsync", "scp"):
        opts = _options(
            args, "te" if program != "cp" else "tS", frozenset({"--target-directory", "--exclude"})
        )
        if not opts.has("-r", "-R", "-a", "--recursive", "--archive"):
            return None
        walk = _Walk(_paths(opts.operands[:-1], cwd, default=None))
        walk.skip_parts = opts.of("--exclude") if program == "rsync" else []
        return walk
    return None
