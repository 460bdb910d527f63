"""The rules behind `classify_command`: levels, secrets, and the names programs go by.

Rules look at one simple command at a time, after the shell has been parsed and wrappers unwrapped. The
blocklist lives in `blocklist`, the per-program argument checks in `checks`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from architect_nb.tools.commands.blocklist import RAW_BLOCKLIST, blocked_reason, blocked_redirect
from architect_nb.tools.commands.programs.registry import model_of

__all__ = [
    "BENIGN_VARIABLES",
    "DANGEROUS",
    "DEV",
    "RAW_BLOCKLIST",
    "SAFE",
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


def program_key(program: str) -> str:
    """`python3.12` → `python`, `pip3` → `pip`: the name of the model a versioned name stands for."""
    model = model_of(program)
    return model.name if model is not None else program


def dev_match(tokens: Sequence[str | None], prefixes: Sequence[Sequence[str]]) -> bool:
    """Whether `tokens` (program first, `program_key`-normalised) start with one of `prefixes`."""
    first = tokens[0] if tokens else None
    return any(
        p[0] == first and len(tokens) >= len(p) and all(t == q for t, q in zip(tokens, p, strict=False))
        for p in prefixes
        if p
    )
