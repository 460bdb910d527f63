"""What `%%architect` and `%architect` lines mean: argument models, parsed with one-line usage errors."""

from __future__ import annotations

import argparse
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
    "LineCommand",
    "UsageError",
    "parse_cell_line",
    "parse_line",
]

MODES: tuple[str, ...] = ("yolo", "confirm-sensitive", "confirm-all")  # `ConfirmMode`, pinned by a test
CELL_USAGE = (
    "usage: %%architect [--agent NAME] [--model M] [--mode yolo|confirm-sensitive|confirm-all] [--dry-run] "
    "[--workspace PATH] [--max-steps N] [--budget USD] [--context NAME[,NAME...]] [--config FILE]"
)
LINE_USAGE = (
    "usage: %architect status | tools | config [key=value ...] | model M | mode MODE | history "
    "| undo [RUN] | transcript [RUN]"
)

Subcommand = Literal["status", "tools", "config", "model", "mode", "history", "undo", "transcript"]
_ARITY: dict[str, tuple[int, int | None]] = {
    "status": (0, 0),
    "tools": (0, 0),
    "config": (0, None),
    "model": (1, 1),
    "mode": (1, 1),
    "history": (0, 0),
    "undo": (0, 1),
    "transcript": (0, 1),
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
    max_steps: int | None = None
    budget_usd: float | None = None
    context: tuple[str, ...] = ()
    config: Path | None = None


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
    p.add_argument("--max-steps", type=_positive_int)
    p.add_argument("--budget", type=_non_negative)
    p.add_argument("--context", type=_names, default=())
    p.add_argument("--config", type=Path)
    return p


def _split(line: str, prog: str, usage: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{prog}: {exc}. {usage}") from None


def parse_cell_line(line: str) -> CellArgs:
    """The options after `%%architect`. Raises `UsageError` (one line) for anything unknown or malformed."""
    ns = _cell_parser().parse_args(_split(line, "%%architect", CELL_USAGE))
    return CellArgs(
        agent=ns.agent,
        model=ns.model,
        mode=cast("ConfirmMode | None", ns.mode),
        dry_run=ns.dry_run,
        workspace=ns.workspace,
        max_steps=ns.max_steps,
        budget_usd=ns.budget,
        context=ns.context,
        config=ns.config,
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
    return LineCommand(name=cast("Subcommand", name), args=rest)
