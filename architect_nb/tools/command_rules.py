"""The rule tables behind `classify_command`: the blocklist, the safe and dev programs, secrets.

Rules look at one simple command at a time, after the shell has been parsed and wrappers unwrapped.
Arguments arrive as `str | None`: None is an argument whose value is only known at run time, and a rule that
cares about arguments treats it as the worst case.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

__all__ = [
    "BENIGN_VARIABLES",
    "DANGEROUS",
    "DEV",
    "DEV_PREFIXES",
    "PRINTERS",
    "RAW_BLOCKLIST",
    "SAFE",
    "SAFE_PROGRAMS",
    "SHELLS",
    "blocked_reason",
    "blocked_redirect",
    "dev_match",
    "program_key",
    "secret_in",
]

Args = Sequence[str | None]

#: The classes, ordered: a command takes the highest level of its parts.
SAFE, DEV, DANGEROUS = 0, 1, 2

# ---------------------------------------------------------------- the blocklist (layer 1)

_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec"})
_ROOT_OR_HOME = re.compile(r"""^["']*(?:/|~|\$HOME|\$\{HOME\})[/.*"']*$""")
_RECURSIVE = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--recursive$")
_MODE_777 = re.compile(r"^(?:0?777|[ugoa]*[+=]rwx)$")
_DISK = r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|loop|md|dm-|mapper/|nbd)"
_DISK_DEVICE = re.compile(_DISK)
_DD_DEVICE = re.compile(r"^of=/dev/(?!(?:null|zero|stdout|stderr|tty)$)")
_KILL_SIGNAL = re.compile(r"^-(?:9|(?:SIG)?KILL)$|^--signal=(?:9|(?:SIG)?KILL)$")

# Anchors for the raw-string backstop: a program name starts a line, follows a separator or an opening quote
# or bracket (as in `eval "sudo id"` or `os.system('rm -rf /')`), optionally behind a path or backslash.
# Every quantifier is bounded, so a 64 KiB command is scanned in linear time (no catastrophic backtracking).
_AT_CMD = r"(?:^|[;&|({`\[,=!\n]|\$\()[ \t]{0,16}[\\\"']{0,4}(?:[\w./-]{0,100}/)?"
_LOOSE = r"(?:^|[\s;&|({`\[,=!\"']|\$\()[\\\"']{0,4}(?:[\w./-]{0,100}/)?"
_END = r"(?=$|[\s;&|)`'\"\\])"
_OPTS = r"(?:-[\w-]{0,40}[ \t]{1,16}){0,16}"
_REST = r"[^\n;&|]{0,400}"
_KILL = r"(?:9|(?:SIG)?KILL)"
#: Patterns matched against the raw text of every script, nested ones included: a backstop for what the
#: structural rules cannot see (code strings given to python -c, perl -e, ...).
RAW_BLOCKLIST: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.MULTILINE), reason)
    for pattern, reason in (
        (_AT_CMD + r"(?:sudo|su|doas|pkexec)(?=[\\\"']{0,4}(?:$|[\s;&|)]))", "privilege escalation"),
        (
            _LOOSE
            + r"rm[ \t]{1,16}"
            + _OPTS
            + r"(?:-[a-zA-Z]{0,8}[rR][a-zA-Z]{0,8}|--recursive)[ \t]{1,16}"
            + _OPTS
            + r"[\"']{0,4}(?:/|~|\$HOME|\$\{HOME\})[/.*\"']{0,16}"
            + _END,
            "recursive delete of / or the home folder",
        ),
        (_LOOSE + r"rm\s" + _REST + r"--no-preserve-root", "rm --no-preserve-root"),
        (_LOOSE + r"chmod[ \t]{1,16}" + _OPTS + r"(?:0?777|[ugoa]{0,4}[+=]rwx)" + _END, "chmod 777"),
        (
            r"\b(?:curl|wget)\b" + _REST + r"\|[ \t]{0,16}(?:sudo[ \t]{1,16})?(?:[\w./-]{0,100}/)?"
            r"(?:ba|z|da|k|mk)?sh\b",
            "pipes a download into a shell",
        ),
        (_LOOSE + r"dd\s" + _REST + r"\bof=/dev/(?!(?:null|zero|stdout|stderr|tty)\b)", "dd onto a device"),
        (r">[ \t]{0,16}" + _DISK, "writes onto a disk device"),
        (_LOOSE + r"mkfs(?:\.\w{1,16})?" + _END, "formats a filesystem"),
        (
            r"(?<![\w:.-])([\w:.-]{1,64})[ \t]{0,16}\([ \t]{0,16}\)[ \t]{0,16}\{[^}]{0,200}?(?<![\w:.-])\1"
            r"[ \t]{0,16}\|[ \t]{0,16}\1(?![\w:.-])",
            "fork bomb",
        ),
        (
            _LOOSE + r"pkill(?=" + _REST + r"\s-" + _KILL + r"\b)(?=" + _REST + r"\s(?:-f|--full)\b)",
            "pkill -9 -f",
        ),
        (
            _LOOSE + r"killall(?=" + _REST + r"\s-(?:" + _KILL + r"|s[ \t]{0,16}" + _KILL + r")\b)",
            "killall -9",
        ),
    )
)


def blocked_reason(program: str, args: Args, texts: Sequence[str]) -> str | None:
    """Why this simple command is always refused, or None. `texts` are the arguments as written."""
    words = [a if a is not None else t for a, t in zip(args, texts, strict=True)]
    if program in _PRIVILEGE:
        return f"`{program}` (privilege escalation) is never run"
    if program.startswith("mkfs"):
        return f"`{program}` formats a filesystem"
    if program == "rm":
        if "--no-preserve-root" in words:
            return "rm --no-preserve-root is never run"
        options_done = False
        recursive = False
        for w in words:
            if w == "--":
                options_done = True
            elif not options_done and _RECURSIVE.match(w):
                recursive = True
            elif _ROOT_OR_HOME.match(w) and recursive:
                return "recursive delete of / or the home folder"
    if program == "chmod" and any(_MODE_777.match(w) for w in words):
        return "chmod 777 makes files writable by everyone"
    if program == "dd" and any(_DD_DEVICE.match(w) for w in words):
        return "dd onto a device"
    if program == "pkill" and any(_KILL_SIGNAL.match(w) for w in words) and {"-f", "--full"} & set(words):
        return "pkill -9 -f can kill unrelated processes"
    if program == "killall" and (
        any(_KILL_SIGNAL.match(w) for w in words)
        or any(
            a in ("-s", "--signal") and b in ("9", "KILL", "SIGKILL") for a, b in itertools.pairwise(words)
        )
    ):
        return "killall -9"
    if program == "kill" and "-1" in words[1:]:
        return "kill -1 signals every process you own"
    return None


def blocked_redirect(target: str) -> str | None:
    if _DISK_DEVICE.match(target):
        return f"writes onto the disk device {target}"
    return None


# ---------------------------------------------------------------- secrets

_SECRET = re.compile(
    r"(?:^|[/:=\s\"'])\.env(?:rc)?\b"
    r"|\.pem\b|\.p12\b|\.pfx\b|\.key$|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"|\.ssh(?:/|$)|\.aws/|\.gnupg|\.netrc|\.git-credentials|\.pgpass|\.pypirc|\.npmrc|\.docker/config"
    r"|\.kube/config|/etc/shadow|(?:^|/)environ$|/proc/[^/\s]*/environ"
)
_DOT_GLOB = re.compile(r"(?:^|/)\.[^/]*[*?\[]|/proc/[^/\s]*[*?\[]")


def secret_in(text: str, globbed: bool = False) -> bool:
    """Whether an argument names a file that typically holds secrets (keys, `.env`, `/proc/*/environ`)."""
    return bool(_SECRET.search(text) or (globbed and _DOT_GLOB.search(text)))


#: Variables whose expansion cannot leak a secret; `$ANYTHING_ELSE` might be an API key.
BENIGN_VARIABLES = frozenset(
    {"HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "HOSTNAME", "TERM", "LANG", "PATH", "TMPDIR"}
    | {"?", "#", "$", "!", "0", "-"}
)

# ---------------------------------------------------------------- programs

#: Shells whose `-c` string (or standard input) is parsed recursively.
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash"})
#: Safe programs whose arguments are only printed, so run-time values (`$(...)`, xargs input) are fine.
PRINTERS = frozenset({"echo", "printf", "true", "false", "test", "[", "basename", "dirname"})

_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")
_PIP = re.compile(r"^pip(?:\d+(?:\.\d+)*)?$")


def program_key(program: str) -> str:
    """`python3.12` → `python`, `pip3` → `pip`: one name per family."""
    if _PYTHON.match(program):
        return "python"
    if _PIP.match(program):
        return "pip"
    return program


def _long_hits(arg: str, dangerous: Sequence[str]) -> bool:
    """`arg` is one of the `dangerous` long options or an abbreviation of one (GNU and git accept those)."""
    name = arg.split("=", 1)[0]
    return len(name) > 3 and any(d.startswith(name) for d in dangerous)


def _short_has(arg: str, letters: str) -> bool:
    return bool(re.match(r"^-[a-zA-Z0-9]+$", arg)) and any(ch in arg[1:] for ch in letters)


def _unknown(args: Args) -> str | None:
    return "has arguments only known at run time" if any(a is None for a in args) else None


def _no_check(args: Args) -> str | None:
    return None


def _options_only(allowed: frozenset[str]) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        for a in args:
            if a is None:
                return "has arguments only known at run time"
            if (a.startswith("-") or a.startswith("+")) and a.split("=", 1)[0] not in allowed:
                return f"option {a} is not a known read-only option"
        return None

    return check


def _check_find(args: Args) -> str | None:
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


def _check_git(args: Args) -> str | None:
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
        if rest == [] or rest[0] in ("-l", "--list"):
            return None
        return "git tag creates or deletes tags unless it only lists them"
    if sub == "stash" and rest[:1] in (["list"], ["show"]):
        return None
    if sub == "reflog" and (rest == [] or rest[0] == "show" or rest[0].startswith("-")):
        return None
    return f"git {sub} is not a read-only git command"


def _check_rg(args: Args) -> str | None:
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


def _check_sed(args: Args) -> str | None:
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


def _check_sort(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if a.startswith("--") and _long_hits(a, ("--output", "--compress-program")):
            return f"sort {a} writes files or runs programs"
        if not a.startswith("--") and _short_has(a, "o"):
            return "sort -o writes a file"
    return None


def _at_most_one_operand(what: str) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if (reason := _unknown(args)) is not None:
            return reason
        operands = [a for a in args if a is not None and not a.startswith("-")]
        return f"{what} with a second file name writes to it" if len(operands) > 1 else None

    return check


def _forbid(*options: str, reason: str) -> Callable[[Args], str | None]:
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


def _only(allowed: frozenset[str], what: str) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if any(a not in allowed for a in args):
            return f"{what} with other arguments changes the system"
        return None

    return check


def _check_ps(args: Args) -> str | None:
    for a in args:
        if a is None:
            return "has arguments only known at run time"
        if not a.startswith("-") and "e" in a:
            return "ps e shows other processes' environment variables"
    return None


_AWK_RISKY = re.compile(r"system|getline|ENVIRON|PROCINFO|[|>@]|\bprint\s*>|close|fflush")


def _check_awk(args: Args) -> str | None:
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


def _check_tee(args: Args) -> str | None:
    if any(a is None or (not a.startswith("-") and a != "/dev/null") for a in args):
        return "tee writes files"
    return None


def _check_jq(args: Args) -> str | None:
    if any(a is None or "env" in a.lower() for a in args):
        return "jq can read environment variables"
    return None


def _exact(*forms: tuple[str, ...]) -> Callable[[Args], str | None]:
    def check(args: Args) -> str | None:
        if tuple(args) in forms or any(
            len(f) and f[-1] == "*" and tuple(args[: len(f) - 1]) == f[:-1] for f in forms
        ):
            return None
        return "only its version and listing forms are recognised as read-only"

    return check


def _check_python(args: Args) -> str | None:
    if tuple(args) in (("--version",), ("-V",), ("-VV",)):
        return None
    if len(args) >= 3 and args[0] == "-m" and args[1] == "pip":
        return _check_pip(args[2:])
    return "runs Python code"


def _check_pip(args: Args) -> str | None:
    if tuple(args) in (("--version",), ("-V",)):
        return None
    if args[:1] and args[0] in ("list", "show", "freeze", "check"):
        for a in args[1:]:
            if a is None or _long_hits(a, ("--log", "--log-file", "--report", "--target", "--root")):
                return f"pip option {a} writes files"
        return None
    return "pip commands other than list/show/freeze/check install or change packages"


_LESS_OK = frozenset(
    {"-N", "-S", "-R", "-r", "-i", "-I", "-F", "-X", "-n", "--no-init", "--quit-if-one-screen"}
)

#: Programs classified `safe`, each with the argument check that can move it out of `safe`.
SAFE_PROGRAMS: dict[str, Callable[[Args], str | None]] = {
    **dict.fromkeys(
        [
            "ls",
            "cat",
            "head",
            "tail",
            "wc",
            "grep",
            "egrep",
            "fgrep",
            "pwd",
            "echo",
            "printf",
            "which",
            "whereis",
            "type",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "stat",
            "du",
            "df",
            "uname",
            "whoami",
            "id",
            "nproc",
            "uptime",
            "free",
            "true",
            "false",
            "test",
            "[",
            "cut",
            "tr",
            "nl",
            "tac",
            "rev",
            "diff",
            "cmp",
            "comm",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "cksum",
            "b2sum",
            "base64",
            "column",
            "fold",
            "expand",
            "unexpand",
            "paste",
            "join",
            "od",
            "hexdump",
            "strings",
            "seq",
            "sleep",
            "cd",
            "locale",
            "arch",
            "tty",
            "groups",
        ],
        _no_check,
    ),
    "tree": _forbid("-o", reason="tree -o writes a file"),
    "file": _forbid("-C", "--compile", reason="file -C writes a compiled magic file"),
    "date": _forbid("-s", "--set", reason="date -s sets the system clock"),
    "hostname": _only(frozenset({"-I", "-i", "-f", "-s", "-d", "-A", "--fqdn", "--short"}), "hostname"),
    "find": _check_find,
    "git": _check_git,
    "rg": _check_rg,
    "sed": _check_sed,
    "sort": _check_sort,
    "uniq": _at_most_one_operand("uniq"),
    "xxd": _at_most_one_operand("xxd"),
    "less": _options_only(_LESS_OK),
    "more": _options_only(frozenset()),
    "man": _options_only(frozenset({"-k", "-f", "-w"})),
    "ps": _check_ps,
    "tee": _check_tee,
    "awk": _check_awk,
    "gawk": _check_awk,
    "mawk": _check_awk,
    "jq": _check_jq,
    "python": _check_python,
    "pip": _check_pip,
    "node": _exact(("--version",), ("-v",)),
    "npm": _exact(("--version",), ("-v",), ("list", "*"), ("ls", "*")),
    "cargo": _exact(("--version",), ("-V",)),
    "rustc": _exact(("--version",), ("-V",)),
    "go": _exact(("version",)),
    "uv": _exact(("--version",), ("pip", "list", "*")),
}

#: Token prefixes classified `dev`: tools that run the project's own code or change its files on purpose.
DEV_PREFIXES: tuple[tuple[str, ...], ...] = tuple(
    tuple(p.split())
    for p in (
        "pytest",
        "py.test",
        "python -m pytest",
        "python -m mypy",
        "python -m ruff",
        "python -m black",
        "python -m isort",
        "python -m flake8",
        "python -m pylint",
        "python -m unittest",
        "python -m coverage",
        "mypy",
        "ruff",
        "black",
        "isort",
        "flake8",
        "pylint",
        "pyright",
        "coverage",
        "tox",
        "nox",
        "pre-commit run",
        "make",
        "cargo build",
        "cargo test",
        "cargo check",
        "cargo clippy",
        "cargo fmt",
        "cargo doc",
        "cargo bench",
        "go build",
        "go test",
        "go vet",
        "mvn",
        "gradle",
        "tsc",
        "eslint",
        "prettier",
        "jest",
        "vitest",
        "npm run",
        "npm test",
        "npm t",
        "pnpm run",
        "pnpm test",
        "yarn run",
        "yarn test",
        "docker ps",
        "docker images",
        "kubectl get",
        "kubectl describe",
    )
)


def dev_match(tokens: Sequence[str | None], prefixes: Sequence[Sequence[str]]) -> bool:
    """Whether `tokens` (program first, `program_key`-normalised) start with one of `prefixes`."""
    first = tokens[0] if tokens else None
    return any(
        p[0] == first and len(tokens) >= len(p) and all(t == q for t, q in zip(tokens, p, strict=False))
        for p in prefixes
        if p
    )
