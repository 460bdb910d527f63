"""The names a command mentions, as bash will see them: every word after quote and escape removal (arguments,
redirection targets, here-doc bodies, loop words, values given to variables), split where code would split a
string (`open('.env')`, `--env-file=.env`), leaving out names given only to leave a file out
(`--exclude=.env`, `rg -g '!.env'`, `find ! -name .env`): the refusal of unnamed reads suggests exactly those.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from architect_nb.tools.commands.shell_parse import ParsedScript, Word

__all__ = ["code_names", "mentioned"]

# A word that could be a file name inside a shell word or a snippet of code in one.
_NAME = re.compile(r"[^\s'\"`;|&<>(){}=,:]+")
# Exclusions written inside one word (a `bash -c` string, a script in a here-doc).
_EXCLUSION = re.compile(
    r"""(?:--exclude(?:-dir)?[= ]|(?:-g|--glob|--iglob)[= ]?['"]?!|(?:!|-not)\s+-i?(?:name|path)\s+['"]?)"""
    r"""[^\s'"]+['"]?"""
)
_EXCLUDING = frozenset({"--exclude", "--exclude-dir"})
_GLOBBING = frozenset({"-g", "--glob", "--iglob"})
_NAMING = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename"})


def code_names(text: str) -> list[str]:
    """The names in a piece of code or a shell word: what could be a file name, options left out."""
    return [n for n in _NAME.findall(text) if n not in ("-", "--") and not n.startswith("-")]


def mentioned(scripts: Sequence[ParsedScript]) -> Iterator[str]:
    """Every name the scripts mention, exclusions left out."""
    for script in scripts:
        for simple in script.commands:
            yield from _in_words(simple.words)
            for redirect in simple.redirects:
                if redirect.target is not None:
                    yield from _names(redirect.target)
        for word in (*script.loose_words, *script.assigned):
            yield from _names(word)


def _in_words(words: Sequence[Word]) -> Iterator[str]:
    values = [w.value for w in words]
    for i, word in enumerate(words):
        value = values[i] or ""
        before = values[i - 1] if i > 0 else None
        if (
            value.startswith(("--exclude=", "--exclude-dir=", "-g!", "--glob=!", "--iglob=!"))
            or before in _EXCLUDING
            or (before in _GLOBBING and value.startswith("!"))
            or (before in _NAMING and i > 1 and values[i - 2] in ("!", "-not"))
        ):
            continue
        yield from _names(word)


def _names(word: Word) -> list[str]:
    text = word.value if word.value is not None else word.skeleton
    return code_names(_EXCLUSION.sub(" ", text))
