"""The trees programs walk: what a recursive reader (`grep -r`, `rg`, `find -exec`), a file lister (`find`,
`fd`, `ls -R`) or an archiver or recursive copier (`tar c`, `zip -r`, `cp -r`) reaches, and the rules that
leave files out, judged exactly as each program does (a wrong "excluded" would let a read pass).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from architect_nb.tools.commands.programs.interpreters import python_command
from architect_nb.tools.commands.programs.options import Options, literal, options, paths, spec_of
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.programs.tree_walk import FilesOnDisk, Walk

__all__ = [
    "FilesOnDisk",
    "Walk",
    "copy_reads",
    "diff_reads",
    "fd_lists",
    "fd_reads",
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
    "python_reads",
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
    return program is not None and described(program).names_only


def reader(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """The tree a program reads the contents of, if it reads one (its model's `reads`)."""
    reads = described(program).reads
    return reads(program, args, cwd) if reads is not None else None


def lister(program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """The tree whose file names a program prints, to feed `xargs` or `$(...)` (its model's `lists`)."""
    lists = described(program).lists
    return lists(program, args, cwd) if lists is not None else None


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


def diff_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """`diff -r` prints the lines of every file that differs under the folders it compares."""
    opts = options(args, spec_of("diff"))
    if not opts.has("-r", "--recursive"):
        return None
    walk = Walk(paths(opts.operands, cwd, default=None))
    walk.skip_parts = opts.of("-x", "--exclude")  # a file's or a folder's name, as diff matches it
    return walk


def fd_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """`fd -x CMD ...`, `fd -X CMD ...` (the rest of the words): the command runs on every file fd lists,
    unless it shows only names."""
    at = next((i for i, a in enumerate(args) if a in ("-x", "--exec", "-X", "--exec-batch")), None)
    if at is None or at + 1 >= len(args) or names_only(os.path.basename(args[at + 1])):
        return None
    return fd_lists(_program, args[:at], cwd)


def python_reads(_program: str, args: Sequence[str], cwd: str) -> Walk | None:
    """`python -m zipfile -c OUT SRC...`, `-m tarfile -c ...`: the archive holds every file under SRC."""
    how, module, rest = python_command([literal(a) for a in args])
    values = [w.value or "" for w in rest]
    if how != "m" or module is None or module.value not in ("zipfile", "tarfile"):
        return None
    return Walk(paths(values[2:], cwd, default=None)) if values[:1] in (["-c"], ["--create"]) else None


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
