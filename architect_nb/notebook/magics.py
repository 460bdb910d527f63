"""What `%%architect` and `%architect` lines mean: argument models, parsed with one-line usage errors."""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn, cast

if TYPE_CHECKING:  # the config schema imports pydantic; %load_ext stays cheap without it
    from architect_nb.config.schema import ConfirmMode

__all__ = [
    "CELL_USAGE",
    "LINE_USAGE",
    "CellArgs",
    "CheckArgs",
    "LineCommand",
    "UsageError",
    "parse_cell_line",
    "parse_check",
    "parse_line",
]

MODES: tuple[str, ...] = ("yolo", "confirm-sensitive", "confirm-all")  # `ConfirmMode`, pinned by a test
EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high")  # `ReasoningEffort`, pinned by a test
THINK_DEFAULT = "medium"  # what a bare --think asks for
CELL_USAGE = (
    "usage: %%architect [--agent NAME] [--model M] [--mode yolo|confirm-sensitive|confirm-all] [--dry-run] "
    "[--workspace PATH] [--read-root PATH ...] [--max-steps N] [--budget USD] [--think [EFFORT|TOKENS]] "
    "[--context NAME[,NAME...]] [--no-notebook] [--step] [--config FILE] "
    "[--new | --thread NAME | --fork RUN|@THREAD[/N][:STEP] [--thread NAME]]"
)
LINE_USAGE = (
    "usage: %architect status | tools | config [key=value ...] | model M | mode MODE | history "
    "| threads | undo [RUN[:STEP]] | review [RUN] | revert RUN PATH | transcript [RUN] | inspect RUN:STEP "
    "| fix | reload [MODULE ...] | build [RUN] | skills "
    "| check NOTEBOOK [--against RUN] [--compare NAME,...] [--stability]"
)

Subcommand = Literal[
    "status",
    "tools",
    "config",
    "model",
    "mode",
    "history",
    "threads",
    "undo",
    "review",
    "revert",
    "transcript",
    "inspect",
    "fix",
    "reload",
    "build",
    "skills",
    "check",
]
THREAD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_FORK = re.compile(
    r"^(@[A-Za-z0-9][A-Za-z0-9_.-]{0,63}(?:/[0-9]{1,6})?|[A-Za-z0-9_-]{1,64})(?::([0-9]{1,6}))?$"
)
_ARITY: dict[str, tuple[int, int | None]] = {
    "status": (0, 0),
    "tools": (0, 0),
    "config": (0, None),
    "model": (1, 1),
    "mode": (1, 1),
    "history": (0, 0),
    "threads": (0, 0),
    "undo": (0, 1),
    "review": (0, 1),
    "revert": (2, 2),
    "transcript": (0, 1),
    "inspect": (1, 1),
    "fix": (0, 0),
    "reload": (0, None),
    "build": (0, 1),
    "skills": (0, 0),
    "check": (1, 6),
}


class UsageError(ValueError):
    """A magic line could not be understood. The message is one line and ends with the usage."""


@dataclass(frozen=True, kw_only=True)
class CellArgs:
    """The options of one `%%architect` cell; None means "the session's default"."""

    agent: str = "build"
    model: str | None = None
    mode: ConfirmMode | None = None
    dry_run: bool = False
    workspace: Path | None = None
    #: --read-root (repeatable): read-only data folders added to `workspace.read_roots` for this cell.
    read_roots: tuple[Path, ...] = ()
    max_steps: int | None = None
    budget_usd: float | None = None
    #: --think: a reasoning effort ("low" ... "high") or a thinking budget in tokens; None: the config's.
    think: str | int | None = None
    context: tuple[str, ...] = ()
    no_notebook: bool = False  # leave the notebook outline out of this run
    step: bool = False  # pause before each model call and each tool call (step-through)
    config: Path | None = None
    new: bool = False  # start a fresh thread instead of continuing the current one
    thread: str | None = None  # continue (or start) the thread with this name
    fork: tuple[str, int | None] | None = None  # (run id or @thread, step): a new thread from there


@dataclass(frozen=True, kw_only=True)
class LineCommand:
    """One `%architect` subcommand and its words."""

    name: Subcommand
    args: tuple[str, ...] = ()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"%%architect: {message}. {CELL_USAGE}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(f"%%architect: {(message or '').strip() or 'bad options'}. {CELL_USAGE}")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise ValueError(text)
    return value


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names or not all(n.isidentifier() for n in names):
        raise ValueError(text)
    return names


def _think(text: str) -> str | int:
    if text in EFFORTS:
        return text
    budget = int(text)
    if budget < 1024:
        raise ValueError(text)
    return budget


def _thread_name(text: str) -> str:
    if not THREAD_NAME.match(text):
        raise ValueError(text)
    return text


def _fork_point(text: str) -> tuple[str, int | None]:
    match = _FORK.match(text)
    if match is None:
        raise ValueError(text)
    return match.group(1), int(match.group(2)) if match.group(2) else None


_think.__name__ = f"effort ({', '.join(EFFORTS)}) or thinking budget (1024 tokens or more)"
_thread_name.__name__ = "thread name (letters, digits, '.', '_' and '-')"
_fork_point.__name__ = "RUN[:STEP] or @THREAD[/N][:STEP]"
_positive_int.__name__ = "positive integer"
_non_negative.__name__ = "amount in USD"
_names.__name__ = "comma-separated variable names"


def _cell_parser() -> _Parser:
    p = _Parser(prog="%%architect", add_help=False, allow_abbrev=False)
    p.add_argument("--agent", default="build")
    p.add_argument("--model")
    p.add_argument("--mode", choices=MODES)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--workspace", type=Path)
    p.add_argument("--read-root", type=Path, action="append", default=[])
    p.add_argument("--max-steps", type=_positive_int)
    p.add_argument("--budget", type=_non_negative)
    p.add_argument("--think", type=_think, nargs="?", const=THINK_DEFAULT)
    p.add_argument("--context", type=_names, default=())
    p.add_argument("--no-notebook", action="store_true")
    p.add_argument("--step", action="store_true")
    p.add_argument("--config", type=Path)
    p.add_argument("--new", action="store_true")
    p.add_argument("--thread", type=_thread_name)
    p.add_argument("--fork", type=_fork_point)
    return p


def _split(line: str, prog: str, usage: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{prog}: {exc}. {usage}") from None


def parse_cell_line(line: str) -> CellArgs:
    """The options after `%%architect`. Raises `UsageError` (one line) for anything unknown or malformed."""
    ns = _cell_parser().parse_args(_split(line, "%%architect", CELL_USAGE))
    if ns.new and (ns.thread or ns.fork):
        other = "--thread" if ns.thread else "--fork"
        raise UsageError(
            f"%%architect: --new starts a fresh thread and {other} names one; give one of them "
            "(--thread NAME alone starts a thread under a name not used yet)."
        )
    return CellArgs(
        agent=ns.agent,
        model=ns.model,
        mode=cast("ConfirmMode | None", ns.mode),
        dry_run=ns.dry_run,
        workspace=ns.workspace,
        read_roots=tuple(ns.read_root),
        max_steps=ns.max_steps,
        budget_usd=ns.budget,
        think=ns.think,
        context=ns.context,
        no_notebook=ns.no_notebook,
        step=ns.step,
        config=ns.config,
        new=ns.new,
        thread=ns.thread,
        fork=ns.fork,
    )


def parse_line(line: str) -> LineCommand:
    """The `%architect` subcommand. Raises `UsageError` (one line) for an unknown one or wrong words."""
    words = _split(line, "%architect", LINE_USAGE)
    if not words:
        raise UsageError(f"%architect: a subcommand is needed. {LINE_USAGE}")
    name, rest = words[0], tuple(words[1:])
    if name not in _ARITY:
        raise UsageError(f"%architect: unknown subcommand {name!r}. {LINE_USAGE}")
    low, high = _ARITY[name]
    if len(rest) < low or (high is not None and len(rest) > high):
        raise UsageError(f"%architect {name}: wrong number of arguments. {LINE_USAGE}")
    if name == "config" and (bad := [w for w in rest if "=" not in w or w.startswith("=")]):
        raise UsageError(f"%architect config: {bad[0]!r} is not key=value. {LINE_USAGE}")
    if name == "mode" and rest[0] not in MODES:
        raise UsageError(f"%architect mode: {rest[0]!r} is not one of {', '.join(MODES)}. {LINE_USAGE}")
    if name == "check":
        parse_check(rest)  # the usage error now, not when the check runs
    return LineCommand(name=cast("Subcommand", name), args=rest)


@dataclass(frozen=True, kw_only=True)
class CheckArgs:
    """`%architect check NOTEBOOK [--against RUN] [--compare NAME,...] [--stability]`."""

    notebook: str
    against: str | None = None
    compare: tuple[str, ...] = ()
    stability: bool = False


class _CheckParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"%architect check: {message}. {LINE_USAGE}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise UsageError(f"%architect check: {(message or '').strip() or 'bad options'}. {LINE_USAGE}")


def parse_check(words: tuple[str, ...]) -> CheckArgs:
    p = _CheckParser(prog="%architect check", add_help=False, allow_abbrev=False)
    p.add_argument("notebook")
    p.add_argument("--against")
    p.add_argument("--compare", type=_dotted_names, default=())
    p.add_argument("--stability", action="store_true")
    ns = p.parse_args(list(words))
    return CheckArgs(notebook=ns.notebook, against=ns.against, compare=ns.compare, stability=ns.stability)


def _dotted_names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names or not all(p.isidentifier() for n in names for p in n.split(".")):
        raise ValueError(text)
    return names


_dotted_names.__name__ = "comma-separated variable names"
