"""Keeping secrets out of everything shown, saved or logged.

A secret is the value of an environment variable whose name looks like one
(`*_API_KEY`, `*_TOKEN`, `*SECRET*`,
`*PASSWORD*`, known provider keys), or a string shaped like a well-known key format (`sk-...`, `ghp_...`,
`AKIA...`). `redact` replaces each with `[REDACTED:NAME]`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SECRET_NAME_RE", "Redactor", "default_redactor", "is_secret_name", "redact"]

SECRET_NAME_RE = re.compile(
    r"(_API_KEY|_APIKEY|_TOKEN|SECRET|PASSWORD|PASSWD|_PRIVATE_KEY|_ACCESS_KEY|CREDENTIALS?$|^API_KEY$|_AUTH$)",
    re.IGNORECASE,
)
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|AKIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{35}|hf_[A-Za-z0-9]{30,})"
)
_MIN_SECRET_LEN = 6  # shorter values ("1", "true") would redact ordinary text


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME_RE.search(name))


class Redactor:
    """Replaces known secret values and key-shaped strings in text and nested data."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.refresh(environ)

    def refresh(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        secrets = {
            value: name
            for name, value in env.items()
            if is_secret_name(name) and len(value) >= _MIN_SECRET_LEN
        }
        # Longest first, so a secret that contains another is replaced whole.
        self._values = sorted(secrets.items(), key=lambda item: -len(item[0]))
        alternation = "|".join(re.escape(value) for value, _ in self._values)
        self._values_re = re.compile(alternation) if alternation else None
        self._names = dict(self._values)

    def redact(self, text: str) -> str:
        if self._values_re is not None:
            text = self._values_re.sub(lambda m: f"[REDACTED:{self._names[m.group(0)]}]", text)
        return _KEY_SHAPES.sub("[REDACTED]", text)

    def redact_data(self, value: Any) -> Any:
        """`redact` applied to every string inside dicts, lists and tuples."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {k: self.redact_data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.redact_data(v) for v in value)
        return value


_default: Redactor | None = None


def default_redactor() -> Redactor:
    """A redactor built from `os.environ` on first use. Call `.refresh()` after changing the environment."""
    global _default  # noqa: PLW0603 - one shared instance, built lazily
    if _default is None:
        _default = Redactor()
    return _default


def redact(text: str) -> str:
    return default_redactor().redact(text)
