"""One program's model: everything the checks know about it, declared in one entry.

The classifier reads `kind`, `check`, `dev` and the flags; the guardrails read `options`, `writes`, `reads`,
`lists` and `names_only`; both follow what `wraps` and `unwraps` say a program runs. A program without a model
is never `safe`: what it writes is the sandbox's and the confirmation's job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from architect_nb.tools.commands.shell_words import Word

if TYPE_CHECKING:
    from architect_nb.tools.commands.programs.effects import Effect, Stdin
    from architect_nb.tools.commands.programs.tree_walk import Walk

__all__ = [
    "Check",
    "Kind",
    "ProgramModel",
    "Spec",
    "UnwrapModel",
    "Unwrapped",
    "WalkModel",
    "Wrapping",
    "WriteModel",
    "alike",
    "frozen",
]

#: The design document's classes a model can claim; a program without one is `dangerous`.
Kind = Literal["safe", "dev"]
#: Why the arguments (None: known only at run time) move a safe program out of `safe`; None if they do not.
Check = Callable[[Sequence[str | None]], str | None]
#: What `program args...` changes: (program, args, what it reads on its input, whether xargs adds operands).
WriteModel = Callable[[str, list[Word], "Stdin", bool], "list[Effect]"]
#: What `program args...` runs (its input's text, if a here-doc gives it): commands, shell code, a script.
UnwrapModel = Callable[[str, Sequence[Word], "str | None"], "Unwrapped"]
#: The tree `program args...` reaches from a folder (its arguments as text), if it reaches one.
WalkModel = Callable[[str, Sequence[str], str], "Walk | None"]


@dataclass(frozen=True, slots=True)
class Spec:
    """How a program's options take values."""

    short: str = ""  # short options that take a value, attached (`-C2`) or as the next word
    long: frozenset[str] = frozenset()  # long options that take the next word as their value
    attached: str = ""  # short options whose optional value can only be attached (`sed -i.bak`, `perl -i`)


@dataclass(frozen=True, slots=True)
class Wrapping:
    """A program that runs the command after its own options (`sudo`, `timeout 5`, `nice -n 5`). Its options
    are read strictly: one it does not list makes the command not safe, as its value could be the command."""

    flags: frozenset[str] = frozenset()
    with_value: frozenset[str] = frozenset()  # short options whose value is the next word, or attached (-n10)
    long_with_value: frozenset[str] = frozenset()  # long options whose value is the next word, or after =
    operands: int = 0  # operands before the command (`timeout 5 cmd`)
    floor: str | None = None  # why running a command through it is never safe, whatever the command


@dataclass(slots=True, kw_only=True)
class Unwrapped:
    #: Commands run by the wrapper, each with whether it receives arguments only known at run time.
    inner: list[tuple[list[Word], bool]] = field(default_factory=list)
    #: Shell code the wrapper runs (`bash -c` strings, `eval` arguments, here-docs fed to a shell).
    scripts: list[str] = field(default_factory=list)
    #: The level the wrapper imposes by itself, with the reason.
    floor: tuple[int, str] | None = None
    #: The wrapper is also a program to classify on its own (`find` with `-exec`).
    classify_self: bool = False
    #: Why the blocklist refuses it (shell code only known at run time cannot be checked).
    blocked: str | None = None
    #: The folder the inner command runs in (`env -C DIR`), for the checks that resolve its paths.
    chdir: Word | None = None
    #: The inner commands run in folders known only at run time (`find -execdir`: each found file's).
    elsewhere: bool = False
    #: A shell that reads its commands from its input (no `-c`, no script, or the script `-`).
    reads_stdin: bool = False
    #: The script file a shell runs (`bash x.sh`, `bash <(...)`).
    script: Word | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgramModel:
    """What the project knows about one program (all defaults: nothing, so it is not safe)."""

    name: str
    #: `python3.12` and `pip3` are this program (the name with a version after it).
    versioned: bool = False
    #: Which of its options take a value, for every parse of its command line.
    options: Spec = Spec()
    #: `safe`: read-only (unless `check` says otherwise); `dev`: a development tool (see `dev`).
    kind: Kind | None = None
    #: For a safe program: the arguments that make it write or run something.
    check: Check | None = None
    #: Its `check` may be given a globbed word as written (`awk`'s check reads only the program text); by
    #: default a glob is passed as unknown, since it could expand to an option the check refuses.
    globs_safe: bool = False
    #: The words after the name that make it a development tool (`("test",)` for `cargo test`; `()`: any).
    dev: tuple[tuple[str, ...], ...] = ()
    #: What it changes, judged by the protected-file check.
    writes: WriteModel | None = None
    #: The files its subcommands rewrite by themselves (`uv add` rewrites pyproject.toml and uv.lock).
    manifests: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The tree whose files it reads (`grep -r`, `tar c`, `cp -r`), judged by the unnamed-read check.
    reads: WalkModel | None = None
    #: The tree whose file names it prints (`find`, `ls -R`), when they feed `xargs` or `$(...)`.
    lists: WalkModel | None = None
    #: Decodes or decompresses bytes into text: always (True) or with one of these options.
    decodes: frozenset[str] | bool = False
    #: A shell whose `-c` string or input is parsed and judged like the command itself.
    is_shell: bool = False
    #: Runs code it is given (a shell, `python`, `eval`): fed a download or decoded bytes, it is blocked.
    runs_code: bool = False
    #: Changes the shell itself or prints the environment: never judged by its words (the reason).
    fail_closed: str | None = None
    #: Only prints its arguments, so values known at run time (`$(...)`, xargs input) are harmless.
    printer: bool = False
    #: Prints its arguments as text (`echo`, `printf`): piped into a shell or an interpreter, that text is the
    #: code it runs, judged as written.
    echoes: bool = False
    #: Moves the shell to another folder (`cd`, `pushd`): later commands' paths are judged from there too.
    moves_shell: bool = False
    #: Shows names, sizes or counts, never contents: a glob that reaches a sensitive file is harmless.
    names_only: bool = False
    #: Reads whole folder trees (`grep -r`): given the home folder or `/` it would read secrets.
    searches_trees: bool = False
    #: Fetches from the network: piped into an interpreter, it runs code nobody has read.
    downloads: bool = False
    #: Runs the command after its options; the command is judged as if it ran alone.
    wraps: Wrapping | None = None
    #: Runs what its arguments say otherwise (`env`, `xargs`, `find -exec`, `bash -c`, `eval`): the commands
    #: and the shell code it runs are judged like the command itself.
    unwraps: UnwrapModel | None = None
    #: Its arguments are never files it opens (`echo`, `which`, `date`): `/etc` in them reaches nothing.
    opens_no_files: bool = False
    #: Its first operand is a pattern or a script, unless an option gives one (`grep -e`, `awk -f`).
    pattern_first: bool = False
    #: Options whose value is a pattern, a separator or a name, never a path (`cut -d /`, `rg -g '/x'`).
    #: Not the option table: `grep -f FILE` takes a value that is a path, and stays one here.
    value_options: frozenset[str] = frozenset()

    def read_only(self, args: Sequence[str | None]) -> bool:
        """Whether this model calls `program args...` safe: a safe program whose check finds nothing."""
        return self.kind == "safe" and (self.check is None or self.check(args) is None)


def alike(model: ProgramModel, *names: str) -> list[ProgramModel]:
    """`model` and the same model under other names (`egrep` for `grep`, `gunzip` for `gzip`)."""
    return [model, *(replace(model, name=name) for name in names)]


def frozen(*names: str) -> frozenset[str]:
    """The set of these option or program names, as the models write their tables."""
    return frozenset(names)
