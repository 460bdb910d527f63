"""Argument checks for the safe programs: the options that would move `find`, `git`, `rg`, `sed`, `sort`, ...
out of `safe`.

Each check gets the arguments as `str | None` (None: only known at run time, treated as the worst case) and
returns why the command is not read-only, or None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = [
    "Args",
    "Check",
    "at_most_one_operand",
    "check_awk",
    "check_find",
    "check_git",
    "check_jq",
    "check_pip",
    "check_printf",
    "check_ps",
    "check_python",
    "check_rg",
    "check_sed",
    "check_sort",
    "check_tee",
    "exact",
    "forbid",
    "no_check",
    "only",
    "options_only",
]

Args = Sequence[str | None]
Check = Callable[[Args], str | None]


def _long_hits(arg: str, dangerous: Sequence[str]) -> bool:
    """`arg` is one of the `dangerous` long options or an abbreviation of one (GNU and git accept those)."""
    name = arg.split("=", 1)[0]
    return len(name) > 3 and any(d.startswith(name) for d in dangerous)


def _short_has(arg: str, letters: str) -> bool:
    return bool(re.match(r"^-[a-zA-Z0-9]+$", arg)) and any(ch in arg[1:] for ch in letters)


def _unknown(args: Args) -> str | None:
    return "has arguments only known at run time" if any(a is None for a in args) else None


def no_check(args: Args) -> str | None:
    return None


def options_only(allowed: frozenset[str]) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        for a in args:
            if a is None:
                return "has arguments only known at run time"
            if (a.startswith("-") or a.startswith("+")) and a.split("=", 1)[0] not in allowed:
                return f"option {a} is not a known read-only option"
        return None

    return check


def check_find(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if a in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls") or a.startswith("-fprint"):
            return f"find {a} runs commands or changes files"
    return None


_GIT_GLOBAL_OK = frozenset(
    {"--no-pager", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
)
_GIT_READ = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "rev-list",
        "show-ref",
        "merge-base",
        "name-rev",
        "count-objects",
        "whatchanged",
        "diff-tree",
        "diff-files",
        "diff-index",
        "for-each-ref",
        "check-ignore",
        "grep",
        "version",
    ]
)
_GIT_BAD_LONG = ("--output", "--ext-diff", "--textconv", "--open-files-in-pager", "--exec")
_GIT_BENIGN_EXACT = frozenset({"--text", "--no-ext-diff", "--no-textconv"})


def check_git(args: Args) -> str | None:
    if (reason := _unknown(args)) is not None:
        return reason
    words = [a for a in args if a is not None]
    i = 0
    while i < len(words) and words[i].startswith("-"):
        opt = words[i]
        if opt == "-C" and i + 1 < len(words):
            i += 2
            continue
        if opt in ("--version", "-v", "--help", "-h") and i == len(words) - 1:
            return None
        if opt not in _GIT_GLOBAL_OK:
            return f"git {opt} can run other programs or change where git looks"
        i += 1
    if i == len(words):
        return None
    sub, rest = words[i], words[i + 1 :]
    for a in rest:
        if a not in _GIT_BENIGN_EXACT and a.startswith("--") and _long_hits(a, _GIT_BAD_LONG):
            return f"git {sub} {a} writes files or runs other programs"
        if sub == "grep" and (a == "-O" or a.startswith("-O")):
            return "git grep -O opens a pager program"
    if sub in _GIT_READ:
        return None
    if sub == "branch":
        listing = {
            "-a",
            "-r",
            "-v",
            "-vv",
            "-l",
            "--list",
            "--all",
            "--remotes",
            "--show-current",
            "--verbose",
        }
        listing |= {"--merged", "--no-merged", "--contains", "--no-color", "--color"}
        if all(a in listing or a.startswith(("--format=", "--sort=", "--color=")) for a in rest):
            return None
        if ("-l" in rest or "--list" in rest) and not any(
            a.startswith("-") and a not in listing for a in rest
        ):
            return None
        return "git branch changes branches unless it only lists them"
    if sub == "remote":
        if rest in ([], ["-v"], ["--verbose"]) or (len(rest) == 2 and rest[0] == "get-url"):
            return None
        return "git remote changes remotes unless it only lists them"
    if sub == "tag":
        listing = {
            "-l",
            "--list",
            "-n",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
        }
        options_ok = all(
            a in listing or a.startswith(("--sort=", "--format=", "--column", "-n")) or not a.startswith("-")
            for a in rest
        )
        if options_ok and (rest == [] or rest[0] in ("-l", "--list")):
            return None
        return "git tag creates or deletes tags unless it only lists them"
    if sub == "stash" and rest[:1] in (["list"], ["show"]):
        return None
    if sub == "reflog" and (rest == [] or rest[0] == "show" or rest[0].startswith("-")):
        return None
    return f"git {sub} is not a read-only git command"


def check_rg(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if a == "--":
            return None
        if a.startswith("--") and _long_hits(a, ("--pre", "--hostname-bin", "--search-zip")):
            return f"rg {a} runs other programs"
        if not a.startswith("--") and _short_has(a, "z"):
            return "rg -z runs decompression programs"
    return None


_SED_PRINT = re.compile(
    r"^\s*(?:(?:\d+|\$|/[^/\\]*/)(?:\s*,\s*(?:\d+|\$|/[^/\\]*/|~?\d+))?\s*!?\s*)?[p=]\s*"
    r"(?:;\s*(?:(?:\d+|\$|/[^/\\]*/)(?:\s*,\s*(?:\d+|\$|/[^/\\]*/|~?\d+))?\s*!?\s*)?[pq=]\s*)*;?\s*$"
)


def check_sed(args: Args) -> str | None:
    if (reason := _unknown(args)) is not None:
        return reason
    words = [a for a in args if a is not None]
    quiet = False
    scripts: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(words):
        a = words[i]
        if a in ("-n", "--quiet", "--silent"):
            quiet = True
        elif a in ("-E", "-r", "--regexp-extended", "-s", "--separate", "-u", "-z", "--null-data"):
            pass
        elif a in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 1
        elif a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif re.match(r"^-[nEsuzr]+$", a):
            quiet = quiet or "n" in a
        elif a.startswith("-") and a != "-":
            return f"sed {a} is not a read-only option"
        elif not scripts and not files:
            scripts.append(a)
        else:
            files.append(a)
        i += 1
    if not quiet:
        return "sed is only safe as `sed -n` printing lines"
    if not scripts or not all(_SED_PRINT.match(s) for s in scripts):
        return "sed script does more than print lines"
    return None


def check_sort(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if a.startswith("--") and _long_hits(a, ("--output", "--compress-program")):
            return f"sort {a} writes files or runs programs"
        if not a.startswith("--") and _short_has(a, "o"):
            return "sort -o writes a file"
    return None


def at_most_one_operand(what: str) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if (reason := _unknown(args)) is not None:
            return reason
        operands = [a for a in args if a is not None and not a.startswith("-")]
        return f"{what} with a second file name writes to it" if len(operands) > 1 else None

    return check


def forbid(*options: str, reason: str) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        for a in args:
            if a is None:
                return "has arguments only known at run time"
            if a in options or any(a.startswith(o + "=") for o in options if o.startswith("--")):
                return reason
            if not a.startswith("--") and any(len(o) == 2 and _short_has(a, o[1]) for o in options):
                return reason
        return None

    return check


def only(allowed: frozenset[str], what: str) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if any(a not in allowed for a in args):
            return f"{what} with other arguments changes the system"
        return None

    return check


def check_printf(args: Args) -> str | None:
    """Only its first word can be an option: `printf -v NAME` assigns a shell variable (`PATH`, too)."""
    first = args[0] if args else ""
    if first is None:
        return "has arguments only known at run time"
    return "printf -v assigns a shell variable" if first.startswith("-v") else None


def check_ps(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if not a.startswith("-") and "e" in a:
            return "ps e shows other processes' environment variables"
    return None


_AWK_RISKY = re.compile(r"system|getline|ENVIRON|PROCINFO|[|>@]|\bprint\s*>|close|fflush")


def check_awk(args: Args) -> str | None:
    program_seen = False
    i = 0
    while i < len(args):
        a = args[i]
        if a is None:
            return "has arguments only known at run time"
        if not program_seen and a in ("-F", "-v"):
            i += 2
            continue
        if not program_seen and (a.startswith(("-F", "-v")) and len(a) > 2):
            i += 1
            continue
        if not program_seen and a.startswith("-"):
            return f"awk {a} is not a known read-only option"
        if not program_seen:
            if _AWK_RISKY.search(a):
                return "awk program runs commands, writes files or reads the environment"
            program_seen = True
        i += 1
    return None if program_seen else "awk without a program"


def check_tee(args: Args) -> str | None:
    if any(a is None or (not a.startswith("-") and a != "/dev/null") for a in args):
        return "tee writes files"
    return None


def check_jq(args: Args) -> str | None:
    if any(a is None or "env" in a.lower() for a in args):
        return "jq can read environment variables"
    return None


def exact(*forms: tuple[str, ...]) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if tuple(args) in forms or any(
            len(f) and f[-1] == "*" and tuple(args[: len(f) - 1]) == f[:-1] for f in forms
        ):
            return None
        return "only its version and listing forms are recognised as read-only"

    return check


def check_python(args: Args) -> str | None:
    if tuple(args) in (("--version",), ("-V",), ("-VV",)):
        return None
    if len(args) >= 3 and args[0] == "-m" and args[1] == "pip":
        return check_pip(args[2:])
    return "runs Python code"


def check_pip(args: Args) -> str | None:
    if tuple(args) in (("--version",), ("-V",)):
        return None
    if args[:1] and args[0] in ("list", "show", "freeze", "check"):
        for a in args[1:]:
            if a is None or _long_hits(a, ("--log", "--log-file", "--report", "--target", "--root")):
                return f"pip option {a} writes files"
        return None
    return "pip commands other than list/show/freeze/check install or change packages"
