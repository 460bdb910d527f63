"""The trees programs walk: what a recursive reader (`grep -r`, `rg`, `find -exec`), a file lister (`find`,
`fd`, `ls -R`) or an archiver or recursive copier (`tar c`, `zip -r`, `cp -r`) reaches, and the rules that
leave files out, judged exactly as each program does (a wrong "excluded" would let a read pass).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from architect_nb.tools.commands.programs.options import Options, options, paths, spec_of
from architect_nb.tools.commands.programs.registry import model_of

__all__ = [
    "FilesOnDisk",
    "Walk",
    "copy_reads",
    "fd_lists",
    "find_exec_programs",
    "find_lists",
    "find_reads",
    "find_walk",
    "git_reads",
    "grep_lists",
    "grep_reads",
    "lister",
    "ls_lists",
    "names_only",
    "reader",
    "rg_lists",
    "rg_reads",
    "seven_zip_reads",
    "tar_reads",
    "zip_reads",
]

_UNRESTRICTED = re.compile(r"-u+|--unrestricted")


def names_only(program: str | None) -> bool:
    """`program` shows names, sizes or counts, never contents (its model says so): a glob that reaches a
    sensitive file is harmless to it."""
    model = model_of(program) if program is not None else None
    return model is not None and model.names_only


class FilesOnDisk(Protocol):
    """The guarded files on disk now (absolute, resolved paths)."""

    def under(self, root: str) -> Iterator[str]: ...


@dataclass(slots=True)
class Walk:
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

    def reaches(self, guarded: FilesOnDisk, *, folders: bool = False) -> str | None:
        """The first guarded file the walk reaches. `folders`: a folder the walk keeps counts whole (what
        `find -name build -exec rm -r {} +` removes), not only the files it keeps."""
        return next(self.reached(guarded, folders=folders), None)

    def reached(self, guarded: FilesOnDisk, *, folders: bool = False) -> Iterator[str]:
        for root in self.roots:
            for path in guarded.under(root):
                rel = os.path.relpath(path, root) if path != root else os.path.basename(path)
                if self._keeps(rel) or (folders and any(self._keeps(f) for f in _folders(rel))):
                    yield path

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
        if self.includes is not None and not any(glob_hits(g, name, rel) for g in self.includes):
            return False
        return self.names is None or any(glob_hits(g, name, rel) for g in self.names)


def _folders(rel: str) -> Iterator[str]:
    """`a/b/c` -> `a`, `a/b`: the folders on the way to a file."""
    parts = rel.split("/")
    return ("/".join(parts[:i]) for i in range(1, len(parts)))


def glob_hits(pattern: str, name: str, rel: str) -> bool:
    """Over-matching, ignoring case: for patterns that choose what is read."""
    pattern = pattern.lower().removeprefix("./")
    return fnmatch.fnmatch(name.lower(), pattern) or fnmatch.fnmatch(rel.lower(), pattern.lstrip("/"))


def reader(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """The tree a program reads the contents of, if it reads one (its model's `reads`)."""
    model = model_of(program)
    return model.reads(program, args, cwd) if model is not None and model.reads is not None else None


def lister(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """The tree whose file names a program prints, to feed `xargs` or `$(...)` (its model's `lists`)."""
    model = model_of(program)
    return model.lists(program, args, cwd) if model is not None and model.lists is not None else None


# ------------------------------------------------------------------ what readers read


def grep_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("grep"))
    recursive = opts.has("-r", "-R", "--recursive", "--dereference-recursive") or "recurse" in opts.of(
        "-d", "--directories"
    )
    if not recursive or opts.has(
        "-l", "-L", "-c", "--files-with-matches", "--files-without-match", "--count"
    ):
        return None
    return _grep_walk(opts, cwd)


def rg_reads(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """rg, ag and ack."""
    opts = options(args, spec_of(program))
    if opts.has("--files", "-l", "--files-with-matches", "--files-without-match", "-c", "--count"):
        return None
    return _rg_walk(opts, args, cwd)


def git_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """`git grep --no-index` and `--untracked` read files git does not track."""
    if args[:1] == ["grep"] and ({"--no-index", "--untracked"} & set(args)):
        return _grep_walk(options(args[1:], spec_of("git-grep")), cwd)
    return None


def find_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """`find -exec` reads what it reaches, unless each program it runs shows only names."""
    if not any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        return None
    readers = find_exec_programs(args)
    return find_walk(args, cwd) if not all(names_only(p) for p in readers) else None


# ------------------------------------------------------------------ what listers list


def find_lists(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    if any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
        return None
    return find_walk(args, cwd)


def fd_lists(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("fd"))
    walk = Walk(paths(opts.operands[1:], cwd), hidden=opts.has("-H", "--hidden", "-u", "--unrestricted"))
    walk.skip_parts = opts.of("-E", "--exclude")
    return walk


def rg_lists(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("rg"))
    return _rg_walk(opts, args, cwd) if opts.has("--files", "-l", "--files-with-matches") else None


def grep_lists(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("grep"))
    if opts.has("-l", "--files-with-matches") and opts.has("-r", "-R", "--recursive"):
        return _grep_walk(opts, cwd)
    return None


def ls_lists(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("ls"))
    return Walk(
        paths(opts.operands, cwd),
        hidden=opts.has("-a", "-A", "--all", "--almost-all"),
        recursive=opts.has("-R", "--recursive"),
    )


def _grep_walk(opts: Options[str], cwd: str) -> Walk:
    given_pattern = bool(opts.of("-e", "-f", "--regexp", "--file"))
    operands = opts.operands if given_pattern else opts.operands[1:]
    walk = Walk(paths(operands, cwd))
    walk.skip_names = opts.of("--exclude")
    walk.skip_folders = opts.of("--exclude-dir")
    includes = opts.of("--include")
    walk.includes = includes or None
    return walk


def _rg_walk(opts: Options[str], args: Sequence[str], cwd: str) -> Walk:
    """ripgrep (and ag, ack) skip hidden files unless told not to (`--hidden`, `-.`, `-uu`). Ignore files
    are not modelled: a sensitive file that is also git-ignored is judged as if rg read it."""
    given_pattern = bool(opts.of("-e", "-f", "--regexp", "--file")) or opts.has("--files")
    operands = opts.operands if given_pattern else opts.operands[1:]
    unrestricted = sum(len(a) - 1 if a.startswith("-u") else 1 for a in args if _UNRESTRICTED.fullmatch(a))
    hidden = opts.has("--hidden", "-.") or unrestricted > 1
    walk = Walk(paths(operands, cwd), hidden=hidden)
    globs = opts.of("-g", "--glob", "--iglob")
    skips = [g[1:] for g in globs if g.startswith("!")]
    walk.skip_parts = [g for g in skips if "/" not in g.strip("/")]  # gitignore style: any level
    walk.skip_paths = [g.lstrip("/") for g in skips if "/" in g.strip("/")]
    positive = [g for g in globs if not g.startswith("!")]
    walk.includes = positive or None
    return walk


def find_walk(args: Sequence[str], cwd: str) -> Walk:
    first = next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!", ")"))), len(args))
    walk = Walk(paths(args[:first], cwd))
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


def find_exec_programs(args: Sequence[str]) -> list[str]:
    return [
        os.path.basename(args[i + 1])
        for i, a in enumerate(args[:-1])
        if a in ("-exec", "-execdir", "-ok", "-okdir")
    ]


# ------------------------------------------------------------------ archives and recursive copies
# (their copy is a file with another name, read without naming the one it holds)


def tar_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    first = args[0] if args else ""
    cluster = first.lstrip("-") if first and not first.startswith("--") else ""
    opts = options(args, spec_of("tar"))
    creates = "c" in cluster or opts.has("-c", "--create", "-r", "--append", "-u", "--update")
    if not creates:
        return None
    operands = opts.operands
    if cluster and not first.startswith("-"):  # old style `tar czf out.tgz dir`
        operands = operands[1 + ("f" in cluster) :]
    base = os.path.join(cwd, opts.of("-C", "--directory")[-1]) if opts.of("-C", "--directory") else cwd
    walk = Walk(paths(operands, base, default=None))
    walk.skip_parts = opts.of("--exclude")
    return walk


def zip_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    opts = options(args, spec_of("zip"))
    if not opts.has("-r", "-R", "--recurse-paths"):
        return None
    walk = Walk(paths(opts.operands[1:], cwd, default=None))
    walk.skip_paths = opts.of("-x", "--exclude")
    return walk


def seven_zip_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    if args[:1] != ["a"]:
        return None
    return Walk(paths(options(args[1:], spec_of("7z")).operands[1:], cwd, default=None))


def copy_reads(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """cp, rsync and scp."""
    opts = options(args, spec_of(program))
    if not opts.has("-r", "-R", "-a", "--recursive", "--archive"):
        return None
    walk = Walk(paths(opts.operands[:-1], cwd, default=None))
    walk.skip_parts = opts.of("--exclude") if program == "rsync" else []
    return walk
