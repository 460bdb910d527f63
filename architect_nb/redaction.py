"""Keeping secrets out of everything shown, saved, logged or sent to the model.

A secret is the value of an environment variable whose name looks like one (`*_API_KEY`, `*_TOKEN`,
`*SECRET*`, `*PASSWORD*`, known provider keys), a value read from a sensitive file the engine knows of
(`add`), or a string shaped like a well-known key (`sk-...`, `ghp_...`, `AKIA...`, a PEM private key).
`redact` replaces each with `[REDACTED:NAME]`, also where it appears in a common encoding: JSON string
escaping, a Python repr, shell quoting (nested up to 3 deep, as in a shell-quoted password inside a tool
call's JSON inside a hook's JSON), URL encoding, HTML escaping, and broken across line ends (`\n`, `\r\n`,
or a backslash continuation). base64, hex and other transformations are out of scope.

Speed: most text holds no secret. One multi-pattern pass finds the few places where one may start
(`redaction_prefilter`), and only windows around them are searched form by form with `str.find`; line-broken
values are searched in a window with its line ends taken out (`benchmarks/redaction.py`).
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

from architect_nb.redaction_prefilter import Prefilter, Window, anchors

__all__ = ["SECRET_NAME_RE", "Redactor", "default_redactor", "is_secret_name", "redact"]

SECRET_NAME_RE = re.compile(
    r"(_API_KEY|_APIKEY|_TOKEN|SECRET|PASSWORD|PASSWD|_PRIVATE_KEY|_ACCESS_KEY|CREDENTIALS?$|^API_KEY$|_AUTH$)",
    re.IGNORECASE,
)
_MIN_SECRET_LEN = 6  # shorter values ("1", "true") would redact ordinary text
# The line ends `_broken` takes out: \n, \r\n, a backslash continuation, and the same escaped (JSON, repr).
_LINE_END = re.compile(r"\\\n|\r\n|\n|\\r\\n|\\n")
# Well-known key formats: a literal prefix to find fast, then the shape to confirm at that place.
_KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (prefix, re.compile(shape))
    for prefix, shape in (
        ("sk-", r"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"),
        ("ghp_", r"ghp_[A-Za-z0-9]{30,}"),
        ("gho_", r"gho_[A-Za-z0-9]{30,}"),
        ("ghu_", r"ghu_[A-Za-z0-9]{30,}"),
        ("ghs_", r"ghs_[A-Za-z0-9]{30,}"),
        ("ghr_", r"ghr_[A-Za-z0-9]{30,}"),
        ("github_pat_", r"github_pat_[A-Za-z0-9_]{40,}"),
        ("AKIA", r"AKIA[0-9A-Z]{16}"),
        ("xox", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("AIza", r"AIza[0-9A-Za-z_\-]{35}"),
        ("hf_", r"hf_[A-Za-z0-9]{30,}"),
        ("-----BEGIN", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    )
)
_WORD_CHAR = re.compile(r"[A-Za-z0-9_]")
_KEY_CHARS = re.compile(r"[A-Za-z0-9_\-/+=\s]*")  # what may follow a key shape's prefix up to a cut
_MAX_HOLDBACK = 256
_MIN_FRAGMENT = 4  # a shorter fragment at a cut edge says too little to redact ordinary text for it


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME_RE.search(name))


class _Secret:
    """One secret value and the forms it is searched in: raw, and its encodings that differ from it."""

    def __init__(self, value: str, name: str) -> None:
        self.value = value
        self.name = name
        self.label = f"[REDACTED:{name}]"
        self.forms = sorted(_forms(value), key=len, reverse=True)
        self.longest = max(len(f) for f in self.forms)


class Redactor:
    """Replaces known secret values, in their common encodings, and key-shaped strings in text and data.

    Thread-safe: `refresh` and `add` swap the whole table at once."""

    def __init__(self, environ: Mapping[str, str] | None = None, *, prefilter: bool = True) -> None:
        self._extra: dict[str, str] = {}  # value -> name, from sensitive files
        self._lock = threading.Lock()
        self._use_prefilter = prefilter  # False searches every text whole (tests compare the two)
        self.refresh(environ)

    def refresh(self, environ: Mapping[str, str] | None = None) -> None:
        """Read the secrets of `environ` (default `os.environ`) again; values added with `add` stay."""
        env = os.environ if environ is None else environ
        table = {
            value: name
            for name, value in env.items()
            if is_secret_name(name) and len(value) >= _MIN_SECRET_LEN
        }
        with self._lock:
            self._env = table
            self._rebuild()

    def add(self, values: Mapping[str, str]) -> None:
        """Also redact these secrets (`{name: value}`, e.g. the values of a workspace's `.env` file)."""
        with self._lock:
            for name, value in values.items():
                if isinstance(value, str) and len(value) >= _MIN_SECRET_LEN:
                    self._extra[value] = name
            self._rebuild()

    def _rebuild(self) -> None:
        merged = {**self._env, **self._extra}
        # Longest first, so a secret that contains another is replaced whole.
        secrets = [_Secret(v, n) for v, n in sorted(merged.items(), key=lambda item: -len(item[0]))]
        self._table = _Table(secrets, self._use_prefilter)

    @property
    def holdback(self) -> int:
        """Characters a streaming view should hold back (and then redact with `redact_cut(cut_end=True)`),
        so a secret is never shown before it can be recognised."""
        return self._table.holdback

    @property
    def _secrets(self) -> list[_Secret]:
        return self._table.secrets

    def redact(self, text: str) -> str:
        if not text:
            return text
        table = self._table  # one read: a concurrent `add` swaps the whole table
        if table.prefilter is None:
            windows: list[Window] = [(0, len(text), table.everyone)]
        else:
            windows = table.prefilter.windows(text)
        spans: list[tuple[int, int, str]] = []
        for low, high, owners in windows:
            chosen = [table.secrets[i] for i in sorted(owners) if i >= 0]
            spans += _spans(text, low, high, chosen, -1 in owners)
        return _replace(text, spans) if spans else text

    def redact_cut(self, text: str, *, cut_start: bool = False, cut_end: bool = False) -> str:
        """`redact` for a piece of text cut out of a longer one: a secret the cut went through leaves only a
        fragment at the edge, which is redacted too (`cut_end`: the text was cut after its last character;
        `cut_start`: before its first). The rule for every cut: redact the whole first, or redact the pieces
        with this."""
        out = self.redact(text)
        if cut_end:
            out = self._edge(out, at_end=True)
        if cut_start:
            out = self._edge(out, at_end=False)
        return out

    def _edge(self, text: str, *, at_end: bool) -> str:
        """The longest fragment (4+ characters) of a secret's form, or of a key shape, at the cut edge."""
        best = 0
        label = "[REDACTED]"
        for secret in self._secrets:
            for form in secret.forms:
                size = _overlap(text, form, at_end)
                if size > best:
                    best, label = size, secret.label
        if at_end:
            tail = text[-80:]
            for prefix, _shape in _KEY_SHAPES:
                at = tail.rfind(prefix)
                if at >= 0 and _KEY_CHARS.fullmatch(tail[at + len(prefix) :]) and len(tail) - at > best:
                    best, label = len(tail) - at, "[REDACTED]"
        if best < _MIN_FRAGMENT:
            return text
        return text[:-best] + label if at_end else label + text[best:]

    def redact_data(self, value: Any) -> Any:
        """`redact` applied to every string inside dicts (keys too), lists and tuples."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {
                (self.redact(k) if isinstance(k, str) else k): self.redact_data(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self.redact_data(v) for v in value)
        return value

    def secrets(self) -> Iterable[str]:
        """The values being redacted (for tests that check nothing leaked)."""
        return [s.value for s in self._secrets]


class _Table:
    """The secrets and what searching for them needs, built together so they are swapped together."""

    def __init__(self, secrets: list[_Secret], use_prefilter: bool) -> None:
        self.secrets = secrets
        self.everyone = frozenset(range(-1, len(secrets)))  # -1: the key shapes
        # A raw secret completes before it is shown; a longer one (a PEM key) or an encoded form still
        # arriving is caught at the cut by `redact_cut`, so the text on screen lags by 256 at most.
        self.holdback = min(max([len(s.value) for s in secrets] + [64]), _MAX_HOLDBACK)
        self.prefilter: Prefilter | None = None
        if use_prefilter:
            # How far a secret reaches from an anchor: its longest form, or its value broken at every
            # character by \r\n (3 characters for each 1).
            reach = max([max(s.longest, 3 * len(s.value)) for s in secrets] + [80]) + 16
            owners: dict[str, set[int]] = {prefix: {-1} for prefix, _shape in _KEY_SHAPES}
            for number, secret in enumerate(secrets):
                for anchor in anchors(secret.value, secret.forms):
                    owners.setdefault(anchor, set()).add(number)
            self.prefilter = Prefilter(owners, reach)


def _spans(
    text: str, low: int, high: int, secrets: list[_Secret], shapes: bool
) -> list[tuple[int, int, str]]:
    """Each of `secrets`, and with `shapes` each key shape, that starts in `text[low:high]` (a key shape may
    run past `high`)."""
    spans: list[tuple[int, int, str]] = []
    for secret in secrets:
        for form in secret.forms:
            start = text.find(form, low, high)
            while start >= 0:
                spans.append((start, start + len(form), secret.label))
                start = text.find(form, start + len(form), high)
    if text.find("\n", low, high) >= 0 or text.find("\\n", low, high) >= 0:
        spans += [(start + low, end + low, label) for start, end, label in _broken(text[low:high], secrets)]
    for prefix, shape in _KEY_SHAPES if shapes else ():
        start = text.find(prefix, low, high)
        while start >= 0:
            if start == 0 or not _WORD_CHAR.match(text[start - 1]) or prefix == "-----BEGIN":
                match = shape.match(text, start)
                if match is not None:
                    spans.append((start, match.end(), "[REDACTED]"))
                    start = text.find(prefix, match.end(), high)
                    continue
            start = text.find(prefix, start + 1, high)
    return spans


def _broken(text: str, secrets: list[_Secret]) -> list[tuple[int, int, str]]:
    """Secrets broken across line ends: searched in the text with its line ends taken out, and mapped back to
    where they are only when one is found, which is rare."""
    joined = _LINE_END.sub("", text)
    found: list[tuple[int, int, _Secret]] = []
    for secret in secrets:
        if len(secret.value) < 2 * _MIN_SECRET_LEN or "\n" in secret.value:
            continue
        at = joined.find(secret.value)
        while at >= 0:
            found.append((at, at + len(secret.value), secret))
            at = joined.find(secret.value, at + len(secret.value))
    if not found:
        return []
    # Where each character of `joined` is in `text`: the line ends removed before it shift it right.
    breaks = [(m.start(), m.end()) for m in _LINE_END.finditer(text)]
    spans = []
    for start, end, secret in found:
        first, last = _original(start, breaks), _original(end - 1, breaks) + 1
        if last - first > len(secret.value):  # broken (one that is not was found as it is)
            spans.append((first, last, secret.label))
    return spans


def _original(index: int, breaks: list[tuple[int, int]]) -> int:
    """The position in the text of character `index` of the text without its line ends."""
    shift = 0
    for start, end in breaks:
        if start - shift > index:
            break
        shift += end - start
    return index + shift


def _overlap(text: str, form: str, at_end: bool) -> int:
    """How many characters at the end (or start) of `text` are the start (or end) of `form`."""
    for size in range(min(len(form) - 1, len(text)), _MIN_FRAGMENT - 1, -1):
        if text.endswith(form[:size]) if at_end else text.startswith(form[-size:]):
            return size
    return 0


#: The encodings a secret is searched in. Text passes through several of the programmatic ones on its way
#: out (a password shell-quoted in a command, inside a tool call's JSON arguments, inside a hook's JSON
#: output), so those nest 3 deep; URL and HTML escaping are applied once, outermost, over 1 level of the
#: others.
_NESTED: tuple[Callable[[str], str], ...] = (
    lambda v: json.dumps(v)[1:-1],
    lambda v: json.dumps(v, ensure_ascii=False)[1:-1],
    lambda v: repr(v)[1:-1],
    shlex.quote,
    lambda v: shlex.quote(v)[1:-1] if shlex.quote(v).startswith("'") else shlex.quote(v),
    lambda v: v.replace("\n", "\r\n"),
)
_OUTER: tuple[Callable[[str], str], ...] = (
    lambda v: quote(v, safe=""),
    lambda v: quote_plus(v, safe=""),
    html.escape,
    lambda v: html.escape(v, quote=False),
)
_NESTING = 3


def _forms(value: str) -> set[str]:
    """The value as it appears raw and in common encodings (only those at least as long as a secret). A
    value of letters and digits has one form; each special character multiplies them."""
    forms = {value}
    level = {value}
    for depth in range(_NESTING):
        level = {encode(form) for form in level for encode in _NESTED} - forms
        forms |= level
        if depth == 0:
            outer_base = {value} | level
    forms |= {encode(form) for form in outer_base for encode in _OUTER}
    return {f for f in forms if len(f) >= _MIN_SECRET_LEN}


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each span replaced; overlapping spans merge (the first label wins)."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[str] = []
    cursor = 0
    end = -1
    for start, stop, label in spans:
        if start < end:  # inside the previous span
            if stop > end:
                end = stop
                cursor = end
            continue
        out.append(text[cursor:start])
        out.append(label)
        cursor = end = stop
    out.append(text[cursor:])
    return "".join(out)


_default: Redactor | None = None


def default_redactor() -> Redactor:
    """A redactor built from `os.environ` on first use. Call `.refresh()` after changing the environment."""
    global _default  # noqa: PLW0603 - one shared instance, built lazily
    if _default is None:
        _default = Redactor()
    return _default


def redact(text: str) -> str:
    return default_redactor().redact(text)
