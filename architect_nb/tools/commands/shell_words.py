"""What `shell_parse` produces: words, redirections and simple commands, plus ANSI-C string decoding."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ParsedScript", "Redirect", "SimpleCommand", "Word", "ansi_c"]


@dataclass(slots=True, kw_only=True)
class Word:
    """One shell word (a command name or argument) as written and, when knowable, as bash will see it."""

    text: str
    #: The literal value after quote removal; None if any part expands at run time.
    value: str | None
    #: The literal parts only, expansions dropped: what an obfuscated name looks like with them empty.
    skeleton: str
    #: Contains `$(...)`, backticks or `<(...)`.
    substituted: bool = False
    #: Unquoted glob characters or brace expansion: bash may turn it into other words.
    globbed: bool = False
    #: Names expanded with `$NAME` / `${NAME}`; "${...}" for any other parameter expansion.
    variables: tuple[str, ...] = ()
    #: Programs run inside its substitutions (to spot `bash -c "$(curl ...)"`).
    inner_programs: tuple[str, ...] = ()
    #: The value with each plain expansion kept as `${NAME}`: what a `bash -c` given this word would parse.
    #: None when a part is computed (substitutions, parameter operators).
    template: str | None = None

    def __post_init__(self) -> None:
        if self.template is None and self.value is not None:
            self.template = self.value


@dataclass(slots=True, kw_only=True)
class Redirect:
    op: str
    target: Word | None
    fd: str | None = None


@dataclass(slots=True, kw_only=True)
class SimpleCommand:
    """A command bash runs: assignments, words and the redirections that apply to it."""

    words: list[Word]
    assignments: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    #: Static text fed by a here-doc or here-string, for shells that would read it as a script.
    stdin_text: str | None = None
    #: (pipeline id, 0-based stage) for every pipeline this command is part of, innermost first.
    pipes: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class ParsedScript:
    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: (name, programs its body calls) for each function definition, to spot fork bombs.
    functions: list[tuple[str, set[str]]] = field(default_factory=list)
    #: Words outside commands (for-loop values, case words), judged like arguments.
    loose_words: list[Word] = field(default_factory=list)
    #: The values given to shell variables (`F=.env cmd`, `export F=x`), for checks of what is mentioned.
    assigned: list[Word] = field(default_factory=list)
    #: Lower-case for-loop variables: their values are the loop words, already judged.
    loop_variables: set[str] = field(default_factory=set)

    def feeding(self, command: SimpleCommand) -> list[SimpleCommand]:
        """The commands whose output `command` reads: the one right before it in each pipe it is part of."""
        before = {(pipeline, stage - 1) for pipeline, stage in command.pipes}
        return [other for other in self.commands if before & set(other.pipes)]


_ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ANSI_C_SIMPLE |= {"v": "\v"}


def ansi_c(body: str) -> str:
    """The value of `$'...'`, so that `$'\\x73udo'` is seen as `sudo` (the blocklist then applies)."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        try:
            if esc[0] in "xuU":
                return chr(int(esc[1:], 16))
            if esc[0] in "01234567":
                return chr(int(esc, 8) & 0xFF)
        except (ValueError, OverflowError):
            return esc
        if esc[0] == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _ANSI_C_SIMPLE.get(esc, esc)

    return _ANSI_C.sub(one, body)
