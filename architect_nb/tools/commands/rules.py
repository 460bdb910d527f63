"""The rule tables behind `classify_command`: levels, secrets, the safe programs and the dev prefixes.

Rules look at one simple command at a time, after the shell has been parsed and wrappers unwrapped. The
blocklist lives in `blocklist`, the per-program argument checks in `checks`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from architect_nb.tools.commands import checks
from architect_nb.tools.commands.blocklist import RAW_BLOCKLIST, blocked_reason, blocked_redirect

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

#: The classes, ordered: a command takes the highest level of its parts.
SAFE, DEV, DANGEROUS = 0, 1, 2

# ---------------------------------------------------------------- secrets

_SECRET = re.compile(
    r"(?:^|[/:=\s\"'*])\.env(?:rc)?\b"
    r"|\.pem\b|\.p12\b|\.pfx\b|\.key$|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"|\.ssh(?:/|$)|\.aws/|\.gnupg|\.netrc|\.git-credentials|\.pgpass|\.pypirc|\.npmrc|\.docker/config"
    r"|\.kube/config|/etc/shadow|(?:^|/)environ$|/proc/[^/\s]*/environ"
    r"|_history\b|\.config/(?:gh|gcloud|hub)\b|\.azure/|credentials|\.vault-token"
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


_LESS_OK = frozenset(
    {"-N", "-S", "-R", "-r", "-i", "-I", "-F", "-X", "-n", "--no-init", "--quit-if-one-screen"}
)

#: Programs classified `safe`, each with the argument check that can move it out of `safe`.
SAFE_PROGRAMS: dict[str, checks.Check] = {
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
        checks.no_check,
    ),
    "tree": checks.forbid("-o", reason="tree -o writes a file"),
    "file": checks.forbid("-C", "--compile", reason="file -C writes a compiled magic file"),
    "date": checks.forbid("-s", "--set", reason="date -s sets the system clock"),
    "hostname": checks.only(frozenset({"-I", "-i", "-f", "-s", "-d", "-A", "--fqdn", "--short"}), "hostname"),
    "find": checks.check_find,
    "git": checks.check_git,
    "rg": checks.check_rg,
    "sed": checks.check_sed,
    "sort": checks.check_sort,
    "uniq": checks.at_most_one_operand("uniq"),
    "xxd": checks.at_most_one_operand("xxd"),
    "less": checks.options_only(_LESS_OK),
    "more": checks.options_only(frozenset()),
    "man": checks.options_only(frozenset({"-k", "-f", "-w"})),
    "ps": checks.check_ps,
    "tee": checks.check_tee,
    "awk": checks.check_awk,
    "gawk": checks.check_awk,
    "mawk": checks.check_awk,
    "jq": checks.check_jq,
    "python": checks.check_python,
    "pip": checks.check_pip,
    "node": checks.exact(("--version",), ("-v",)),
    "npm": checks.exact(("--version",), ("-v",), ("list", "*"), ("ls", "*")),
    "cargo": checks.exact(("--version",), ("-V",)),
    "rustc": checks.exact(("--version",), ("-V",)),
    "go": checks.exact(("version",)),
    "uv": checks.exact(("--version",), ("pip", "list", "*")),
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
