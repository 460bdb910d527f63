"""`classify_command`: the blocklist (layer 1) and the safe/dev/dangerous classes (layer 2) of run_command.

The command is parsed with tree-sitter-bash (`shell_parse`), then every simple command is judged on its own,
wherever it appears: lists, pipelines, subshells, substitutions, and the strings given to `bash -c`, `eval`
and friends, parsed recursively. Wrappers (`env`, `timeout`, `xargs`, `find -exec`, ...) are unwrapped and the
inner command is judged too. The whole command takes the class of its most dangerous part. Anything the
classifier does not model is `dangerous` (fail closed).

It stays one module on purpose: `_script`, `_simple`, `_argv` and `_classify_program` are one recursive
judge around one running `_Judgement` (a `bash -c` argument is a script again), and splitting them would
only spread that recursion over files. The tables it consults live apart, in `rules` and `checks`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from architect_nb.config.schema import CommandsConfig
from architect_nb.tools.commands import rules
from architect_nb.tools.commands.outside import leads_outside, outside_path
from architect_nb.tools.commands.programs.registry import described
from architect_nb.tools.commands.rules import DANGEROUS, DEV, SAFE
from architect_nb.tools.commands.shell_parse import ParsedScript, SimpleCommand, Word, parse_command
from architect_nb.tools.commands.wrappers import unwrap

__all__ = ["MAX_COMMAND_CHARS", "CommandVerdict", "Sensitivity", "classify_command"]

Sensitivity = Literal["safe", "dev", "dangerous"]
_LEVELS: tuple[Sensitivity, ...] = ("safe", "dev", "dangerous")

#: Longer commands are only checked against the raw blocklist and are `dangerous`: tree-sitter's error
#: recovery is superlinear on some malformed input, and real commands are far shorter (scripts go in files).
MAX_COMMAND_CHARS = 16 * 1024
#: How deep `bash -c "bash -c '...'"` and friends are followed.
MAX_SHELL_DEPTH = 8

_OK_WRITE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_FD_DUP = re.compile(r"^(?:\d+|-)$")
_VERSIONED = re.compile(r"^(?:python|pypy|perl|ruby|node|nodejs|php|lua|tclsh|Rscript)[\d.]*$")
#: Shells and the builtins that run a string as shell code: fed decoded bytes, they run code nobody read.
_SHELL_CODE = ("eval", "source", ".")
#: The redirections that give a command its input.
_INPUT = ("<", "<<", "<<<")


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandVerdict:
    """What `classify_command` decided.

    Attributes:
        sensitivity: `safe` (read-only), `dev` (development tools) or `dangerous` (anything else).
        blocked: The command matches the blocklist and must never run, whatever the confirmation mode.
        reason: Why it is blocked, or why it is not `safe`; None for safe commands.
    """

    sensitivity: Sensitivity
    blocked: bool = False
    reason: str | None = None


class _Judgement:
    """The running verdict: the highest level seen, with the reason of the first part that reached it."""

    def __init__(self, extras: _Extras) -> None:
        self.extras = extras
        self.level = SAFE
        self.reason: str | None = None
        self.blocked: str | None = None
        #: Lower-case for-loop variables seen so far: they hold loop words, which are judged themselves.
        self.loop_variables: set[str] = set()

    def leaky(self, word: Word) -> str | None:
        """The first variable `word` expands that may hold a secret."""
        for name in word.variables:
            if name not in rules.BENIGN_VARIABLES and name not in self.loop_variables:
                return name
        return None

    def raise_to(self, level: int, reason: str) -> None:
        if level > self.level:
            self.level, self.reason = level, reason

    def block(self, reason: str) -> None:
        if self.blocked is None:
            self.blocked = reason
        self.raise_to(DANGEROUS, reason)

    def verdict(self) -> CommandVerdict:
        if self.blocked is not None:
            return CommandVerdict(sensitivity="dangerous", blocked=True, reason=f"Blocked: {self.blocked}.")
        return CommandVerdict(sensitivity=_LEVELS[self.level], reason=self.reason)


@dataclass(frozen=True, slots=True)
class _Extras:
    """The configuration's additions, hashable so that verdicts can be cached."""

    safe: tuple[tuple[str, ...], ...] = ()
    dev: tuple[tuple[str, ...], ...] = ()
    blocked: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: CommandsConfig | None) -> _Extras:
        if config is None:
            return cls()
        return cls(
            safe=tuple(tuple(p.split()) for p in config.safe_commands if p.split()),
            dev=tuple(tuple(p.split()) for p in config.dev_prefixes if p.split()),
            blocked=tuple(config.blocked_patterns),
        )


def classify_command(
    command: str, config: CommandsConfig | None = None, *, env: Mapping[str, str] | None = None
) -> CommandVerdict:
    """Classify a shell command without running it. Never raises.

    Args:
        command: The shell string, as run_command would give it to bash.
        config: Adds safe commands, dev prefixes and blocked patterns; the built-in blocklist always applies.
        env: Extra environment variables the command would run with; any make it not safe, like `VAR=x cmd`.
    """
    try:
        verdict = _classify_cached(command, _Extras.of(config))
    except Exception as exc:  # fail closed on any bug, never raise
        return CommandVerdict(sensitivity="dangerous", reason=f"could not be analysed ({type(exc).__name__})")
    if env and not verdict.blocked and verdict.sensitivity != "dangerous":
        names = ", ".join(sorted(env))[:200]
        return CommandVerdict(sensitivity="dangerous", reason=f"sets environment variables ({names})")
    return verdict


@functools.lru_cache(maxsize=512)
def _classify_cached(command: str, extras: _Extras) -> CommandVerdict:
    return classify_uncached(command, extras)


def classify_uncached(command: str, extras: _Extras | None = None) -> CommandVerdict:
    judgement = _Judgement(extras or _Extras())
    if not isinstance(command, str):
        return CommandVerdict(sensitivity="dangerous", reason="is not a string")
    if not command.strip():
        return CommandVerdict(sensitivity="dangerous", reason="is empty")
    if len(command) > MAX_COMMAND_CHARS:
        _raw_backstop(command, judgement)
        if judgement.blocked is not None:
            return judgement.verdict()
        return CommandVerdict(
            sensitivity="dangerous", reason=f"is longer than {MAX_COMMAND_CHARS} characters"
        )
    if "\x00" in command:
        return CommandVerdict(sensitivity="dangerous", reason="contains a NUL character")
    _script(command, judgement, 0)
    return judgement.verdict()


def _script(text: str, judgement: _Judgement, depth: int) -> None:
    """Judge a shell script: the top-level command or a string given to `bash -c`, `eval`, ..."""
    _raw_backstop(text, judgement)
    if depth > MAX_SHELL_DEPTH:
        judgement.raise_to(DANGEROUS, "nests shells too deeply to analyse")
        return
    # bash removes backslash-newline before anything else; the grammar would split the word there instead.
    text = text.replace("\\\n", "")
    try:
        parsed = parse_command(text)
    except UnicodeError:
        judgement.raise_to(DANGEROUS, "contains characters that cannot be passed to bash")
        return
    judgement.loop_variables |= parsed.loop_variables
    for problem in parsed.problems:
        judgement.raise_to(DANGEROUS, problem)
    for word in parsed.loose_words:
        if (name := judgement.leaky(word)) is not None:
            judgement.raise_to(DANGEROUS, f"expands ${name}, which may hold a secret")
        if rules.secret_in(word.value if word.value is not None else word.text, word.globbed):
            judgement.raise_to(DANGEROUS, f"names {word.text}, which may hold secrets")
        if outside_path(word.value if word.value is not None else (word.template or word.text)):
            judgement.raise_to(DANGEROUS, f"loops over {word.text[:60]}, outside the workspace")
    if _BRACES.search(text):
        # bash expands `{rm,-rf,/}` into words; judge the expanded text too, for the blocklist's sake.
        expanded = _BRACES.sub(_expand_braces, text)
        if expanded != text:
            _script(expanded, judgement, depth + 1)
    for name, called in parsed.functions:
        if name in called:
            judgement.block(f"the function {name!r} calls itself (a fork bomb)")
    for cmd in parsed.commands:
        _simple(cmd, parsed, judgement, depth)


_BRACES = re.compile(
    r"(?<![^\s{};|&<>()])([^\s{};|&<>()]{0,200})\{([^{}\s]{0,200},[^{}\s]{0,200})\}([^\s{};|&<>()]{0,200})"
)


def _expand_braces(match: re.Match[str]) -> str:
    head, alternatives, tail = match.groups()
    return " ".join(head + alt + tail for alt in alternatives.split(","))


def _raw_backstop(text: str, judgement: _Judgement) -> None:
    for pattern, reason in rules.RAW_BLOCKLIST:
        if pattern.search(text):
            judgement.block(reason)
            return
    _config_patterns(text, judgement)


def _config_patterns(text: str, judgement: _Judgement) -> None:
    for pattern in judgement.extras.blocked:
        compiled = _compile(pattern)
        if compiled is None:
            judgement.block(f"blocked_patterns entry {pattern!r} is not a valid regex; fix the configuration")
        elif compiled.search(text):
            judgement.block(f"matches the configured blocked pattern {pattern!r}")


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _simple(cmd: SimpleCommand, parsed: ParsedScript, judgement: _Judgement, depth: int) -> None:
    for red in cmd.redirects:
        _redirect(red.op, red.target, judgement)
    if cmd.assignments:
        judgement.raise_to(DANGEROUS, f"sets {', '.join(cmd.assignments)} for the command")
    if not cmd.words:
        return
    program = cmd.words[0].value
    if program is not None:
        base = program.rsplit("/", 1)[-1]
        # Only a command given input can run what a download or a decoder gives it.
        fed = any(stage for _, stage in cmd.pipes) or any(r.op in _INPUT for r in cmd.redirects)
        if fed and (
            _interpreter(base) or _passes_input_on(base, cmd) or _named_interpreters(base, cmd.words[1:])
        ):
            _piped_into(cmd, parsed, base, judgement, depth)
            _fed_computed_input(cmd, base, judgement)
    _argv(cmd.words, judgement, depth, stdin_text=cmd.stdin_text)


def _redirect(op: str, target: Word | None, judgement: _Judgement) -> None:
    if target is not None and (name := judgement.leaky(target)) is not None:
        judgement.raise_to(DANGEROUS, f"expands ${name}, which may hold a secret")
    if op in ("<<", "<<<"):
        return
    if target is None:
        if op.endswith("-"):
            return
        judgement.raise_to(DANGEROUS, f"has a redirection it cannot read ({op})")
        return
    value = target.value
    if (value or target.skeleton).startswith(("/dev/tcp/", "/dev/udp/")):
        judgement.raise_to(DANGEROUS, "opens a network connection")
    if op in ("<", "<&"):
        if value is None or rules.secret_in(value, target.globbed):
            judgement.raise_to(DANGEROUS, "reads a file that may hold secrets")
        elif op == "<" and outside_path(value):
            judgement.raise_to(DANGEROUS, f"reads a file outside the workspace ({target.text[:60]})")
        return
    if op in (">&", "<&") and value is not None and _FD_DUP.match(value):
        return
    if value is not None and (reason := rules.blocked_redirect(value)):
        judgement.block(reason)
    if value in _OK_WRITE_TARGETS:
        return
    judgement.raise_to(DANGEROUS, f"writes to a file ({op} {target.text})")


def _piped_into(
    cmd: SimpleCommand, parsed: ParsedScript, base: str, judgement: _Judgement, depth: int
) -> None:
    """Interpreters fed by a download are blocked; a shell fed a static script gets it judged."""
    for pipe_id, stage in cmd.pipes:
        for other in parsed.commands:
            for other_pipe, other_stage in other.pipes:
                if other_pipe != pipe_id or other_stage >= stage or not other.words:
                    continue
                name = other.words[0].skeleton.rsplit("/", 1)[-1]
                if described(name).downloads:
                    judgement.block(f"pipes a download ({name}) into {base}")
                if _decodes(name, other.words[1:]):
                    judgement.block(f"pipes decoded data ({name}) into {base}; run the code as written")
                if (
                    other_stage == stage - 1
                    and described(name).echoes
                    and described(base).is_shell
                    and all(w.value is not None for w in other.words[1:])
                ):
                    _script(" ".join(w.value or "" for w in other.words[1:]), judgement, depth + 1)


def _fed_computed_input(cmd: SimpleCommand, base: str, judgement: _Judgement) -> None:
    """Input computed by a download or a decoder, given by a redirection (`bash <<< "$(curl URL)"`,
    `python3 - < <(curl URL)`), is blocked as a pipe from them is."""
    for redirect in cmd.redirects:
        if redirect.op not in _INPUT or redirect.target is None:
            continue
        download, decoder = _computed_by(redirect.target)
        if download is not None:
            judgement.block(f"feeds a download ({download}) to {base}")
        if decoder is not None:
            judgement.block(f"feeds decoded data ({decoder}) to {base}; run the code as written")


def _passes_input_on(base: str, cmd: SimpleCommand) -> bool:
    """What runs other commands gives them its input: any wrapper, and a program whose model's reader finds
    commands or shell code in its words (`env bash`, `xargs sh`, `find -exec bash`), or refuses them."""
    if described(base).wraps is not None:
        return True
    runs = unwrap(base, cmd.words[1:], cmd.stdin_text)
    return runs is not None and bool(runs.inner or runs.scripts or runs.floor)


def _named_interpreters(base: str, args: Sequence[Word]) -> list[str]:
    """The shells and interpreters among the words of a program the checks cannot call safe (`ionice -c3
    bash`, `flock /tmp/lock sh`, `uv run python -`): no model says how it runs them, so it may run them with
    its input and its arguments."""
    values = [w.value for w in args]
    named = [n for v in values if v is not None and _interpreter(n := v.rsplit("/", 1)[-1])]
    if not named or described(rules.program_key(base)).read_only(values):
        return []
    return named


def _runs_computed_code(base: str, args: Sequence[Word], judgement: _Judgement) -> None:
    """Code computed by a download or a decoder, given to an interpreter (`bash -c "$(curl URL)"`), or to a
    program that may run one it names (`ionice bash -c "$(curl URL)"`), is blocked."""
    runners = [base] if _interpreter(base) else _named_interpreters(base, args)
    if not runners:
        return
    shell = any(described(r).is_shell or r in _SHELL_CODE for r in runners)
    for word in args:
        download, decoder = _computed_by(word)
        if download is not None:
            judgement.block(f"runs code downloaded by {download}")
        if decoder is not None and shell:
            judgement.block(f"runs code decoded by {decoder}; run the code as written")


def _computed_by(word: Word) -> tuple[str | None, str | None]:
    """The first (by name) downloader and decoder among the programs whose output `word` holds."""
    called = sorted({p.rsplit("/", 1)[-1] for p in word.inner_programs})
    download = next((p for p in called if described(p).downloads), None)
    return download, next((p for p in called if described(p).decodes is not False), None)


def _interpreter(base: str) -> bool:
    """Runs code it is given (`python3.12` as much as `python`)."""
    return described(base).runs_code or bool(_VERSIONED.match(base))


def _decodes(name: str, args: Sequence[Word]) -> bool:
    decodes = described(name).decodes
    if isinstance(decodes, bool):
        return decodes
    return any((w.value or w.text) in decodes for w in args)


def _argv(
    words: Sequence[Word],
    judgement: _Judgement,
    depth: int,
    *,
    stdin_text: str | None = None,
    opaque_tail: bool = False,
) -> None:
    """Judge one command given as words: the program first. Wrappers recurse into their inner command."""
    for word in words:
        if (leaky := judgement.leaky(word)) is not None:
            judgement.raise_to(DANGEROUS, f"expands ${leaky}, which may hold a secret")
    name = words[0]
    if name.value is None or name.globbed:
        # The blocklist cannot check a name known only at run time (`$x`, `$(...)`, `/bin/s?do`).
        judgement.block(f"the program name {name.text[:60]} is only known at run time; write it literally")
        return
    program = name.value
    base = program.rsplit("/", 1)[-1]
    if "/" in program:
        judgement.raise_to(DANGEROUS, f"runs a program by explicit path ({program})")
    if not base:
        judgement.raise_to(DANGEROUS, "has an empty program name")
        return
    args = list(words[1:])
    values = [w.value for w in args]
    texts = [w.text for w in args]
    if (reason := rules.blocked_reason(base, values, texts)) is not None:
        judgement.block(reason)
    normalized = " ".join([base, *(v if v is not None else t for v, t in zip(values, texts, strict=True))])
    _raw_backstop(normalized, judgement)
    if any(word.inner_programs for word in args):
        _runs_computed_code(base, args, judgement)
    wrapped = unwrap(base, args, stdin_text)
    if wrapped is not None:
        if wrapped.blocked is not None:
            judgement.block(wrapped.blocked)
        if wrapped.floor is not None:
            judgement.raise_to(*wrapped.floor)
        for script in wrapped.scripts:
            _script(script, judgement, depth + 1)
        for inner, opaque in wrapped.inner:
            _argv(inner, judgement, depth, opaque_tail=opaque or opaque_tail)
        if not wrapped.classify_self:
            return
    if (fail_closed := described(base).fail_closed) is not None:
        judgement.raise_to(DANGEROUS, fail_closed)
        return
    _classify_program(base, args, judgement, opaque_tail=opaque_tail)


def _classify_program(base: str, args: Sequence[Word], judgement: _Judgement, *, opaque_tail: bool) -> None:
    key = rules.program_key(base)
    values = [w.value for w in args]
    tokens: list[str | None] = [key, *values]
    raw_tokens: list[str | None] = [base, *values]
    extras = judgement.extras
    model = described(key)
    if rules.dev_match(raw_tokens, extras.safe) or rules.dev_match(tokens, extras.safe):
        level, reason = SAFE, None
    elif rules.dev_match(raw_tokens, extras.dev) or rules.dev_match(tokens, extras.dev):
        level, reason = DEV, f"{base} is a development tool"
    elif rules.dev_match(tokens, [(key, *words) for words in model.dev]):
        level, reason = DEV, f"{base} is a development tool (runs project code)"
    elif model.kind == "safe":
        checked = [None if w.globbed and not model.globs_safe else w.value for w in args]
        reason = model.check(checked) if model.check is not None else None
        level = DANGEROUS if reason else SAFE
        reason = f"{base}: {reason}" if reason else None
    else:
        judgement.raise_to(DANGEROUS, f"{base} is not a recognised read-only or development command")
        return
    if reason is not None:
        judgement.raise_to(level, reason)
    if level != DANGEROUS and (outside := leads_outside(key, args)) is not None:
        # The sandbox leaves the rest of the file system readable, so this asks, sandboxed or not.
        judgement.raise_to(DANGEROUS, f"{base} reaches outside the workspace ({outside[:60]})")
        return
    if level != SAFE:
        return
    if model.searches_trees and any(_broad(w.value or w.text) for w in args):
        judgement.raise_to(DANGEROUS, f"{base} would search folders that hold secrets")
    if model.moves_shell and (not args or any(_broad(w.value or w.text) for w in args)):
        judgement.raise_to(DANGEROUS, "cd to a folder that holds secrets (later commands would read it)")
    if model.moves_shell and any(w.value == "-" for w in args):
        judgement.raise_to(DANGEROUS, "cd - goes to $OLDPWD, which may lie outside the workspace")
    for word in args:
        shown = word.value if word.value is not None else word.text
        if rules.secret_in(shown, word.globbed) or rules.secret_in(word.skeleton):
            judgement.raise_to(DANGEROUS, f"{base} would read {word.text}, which may hold secrets")
        if word.substituted and not model.printer:
            judgement.raise_to(DANGEROUS, f"{base} gets arguments computed at run time ({word.text[:60]})")
    if opaque_tail and not model.printer:
        judgement.raise_to(DANGEROUS, f"{base} gets arguments from its input (xargs)")


#: Folders that certainly hold secrets.
_BROAD_PATHS = frozenset({"/", "~", "~/", "$HOME", "${HOME}", "/root", "/home", "/proc", "/etc", "/var"})


def _broad(path: str) -> bool:
    """A folder tree that holds secrets: /, the home folder, /proc, or above the workspace (`..`)."""
    return path.rstrip("/") in _BROAD_PATHS or path in _BROAD_PATHS or path.startswith(("..", "/proc"))
